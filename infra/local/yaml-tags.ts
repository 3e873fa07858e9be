import type { Tags } from 'yaml';

/**
 * CloudFormation's short-form intrinsic functions (`!Ref`, `!GetAtt`, …), read as plain values: local
 * tooling only needs the shape of the templates, never the resolved references.
 */
const intrinsic = (tag: string, collection?: 'seq' | 'map') => ({
  tag: `!${tag}`,
  ...(collection ? { collection } : {}),
  resolve: (value: unknown) => ({ [`Fn::${tag}`]: value }),
});

export const cloudFormationTags: Tags = [
  'Ref',
  'GetAtt',
  'Sub',
  'ImportValue',
  'Base64',
  'If',
  'Equals',
  'Not',
  'And',
  'Or',
  'FindInMap',
  'Select',
  'Split',
  'Join',
  'GetAZs',
  'Condition',
].flatMap((tag) => [intrinsic(tag), intrinsic(tag, 'seq'), intrinsic(tag, 'map')]);
