import packageJson from '../package.json' with { type: 'json' };

/** The application version (dotted numeric form), from package.json at build time. */
export const APP_VERSION: string = packageJson.version;

/** Whole seconds this process (locally the service, on AWS the function's container) has been up. */
export const uptimeSeconds = (): number => Math.floor(process.uptime());
