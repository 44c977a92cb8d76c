// The parts of Node.js that the specs use to read their example files (vitest runs them in
// Node.js). Declared here because the project has no @types/node; the build's tsconfig.json
// leaves js/src/__tests__ out, so the report app cannot use them.
declare module 'fs' {
  export function readFileSync(path: string, encoding: 'utf8'): string;
}
declare module 'path' {
  export function join(...parts: string[]): string;
}
declare const __dirname: string;
