import { Logger, type LogItem, LogLevelThreshold } from '@aws-lambda-powertools/logger';

/** Where a copy of each JSON line goes besides the console (the local runtime's log file). */
export type LogSink = (line: string) => void;

type SinkLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/**
 * Powertools' logger with optional sinks. In Lambda there are none: the lines go to stdout, which
 * CloudWatch keeps. The local runtime adds a file sink (infra/local/start.ts), so that the service's
 * own log can be read back (GET /logs, source `file`); a sink may take lines the console does not show
 * (the file keeps INFO while the terminal shows WARN).
 */
class ServiceLogger extends Logger {
  #sinks: Array<{ write: LogSink; threshold: number }> = [];
  #consoleThreshold: number | undefined;

  /**
   * Also writes every line at `level` or above to `write`; the console keeps the level it has now.
   * Answers a function that removes the sink. A sink that throws loses that line, never the caller's work.
   *
   * @example
   * const remove = logger.addSink((line) => appendFileSync('service.log', `${line}\n`), 'INFO');
   */
  addSink(write: LogSink, level: SinkLevel = 'INFO'): () => void {
    this.#consoleThreshold ??= this.level;
    const sink = { write, threshold: LogLevelThreshold[level] };
    this.#sinks.push(sink);
    if (sink.threshold < this.level) super.setLogLevel(level);
    return () => {
      this.#sinks = this.#sinks.filter((other) => other !== sink);
      if (this.#sinks.length > 0 || this.#consoleThreshold === undefined) return;
      super.setLogLevel(this.#levelName(this.#consoleThreshold));
      this.#consoleThreshold = undefined;
    };
  }

  /**
   * Sets the console's level. While sinks are added they keep theirs: the logger's own level is the
   * lower of the two, so a sink still receives its lines when the console is made quieter.
   */
  override setLogLevel(level: Parameters<Logger['setLogLevel']>[0]): void {
    // Powertools' constructor calls this before the subclass's fields exist.
    if (!(#sinks in this) || this.#consoleThreshold === undefined) {
      super.setLogLevel(level);
      return;
    }
    super.setLogLevel(level);
    this.#consoleThreshold = this.level;
    const lowest = Math.min(this.level, ...this.#sinks.map((sink) => sink.threshold));
    if (lowest < this.level) super.setLogLevel(this.#levelName(lowest));
  }

  protected override printLog(logLevel: number, log: LogItem): void {
    if (this.#sinks.length === 0) {
      super.printLog(logLevel, log);
      return;
    }
    if (logLevel >= (this.#consoleThreshold ?? 0)) super.printLog(logLevel, log);
    else log.prepareForPrint();
    const line = JSON.stringify(log.getAttributes(), this.getJsonReplacer());
    for (const sink of this.#sinks) {
      if (logLevel < sink.threshold) continue;
      try {
        sink.write(line);
      } catch {
        // A full disk or a removed directory must not fail the request that logged.
      }
    }
  }

  #levelName(threshold: number): Parameters<Logger['setLogLevel']>[0] {
    const entry = Object.entries(LogLevelThreshold).find(([, value]) => value === threshold);
    return (entry?.[0] ?? 'INFO') as Parameters<Logger['setLogLevel']>[0];
  }
}

/**
 * The one structured JSON logger. Request middleware adds `trace_id` to every line it writes while a
 * request runs. Lines about one organization name it in an `orgId` or `org_id` field: GET /logs shows an
 * organization the service's lines that name it, and no others. Never log a credential, token, password
 * or request body.
 */
export const logger = new ServiceLogger({ serviceName: 'agent-operations' });
