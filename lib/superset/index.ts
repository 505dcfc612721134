export * from './client.ts';
export * from './errors.ts';
export * from './pool.ts';
export * from './rison.ts';
export type * from './types.ts';
