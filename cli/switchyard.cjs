#!/usr/bin/env node
// The `switchyard` bin: runs cli/main.ts on the project's Node 24 (the `node` devDependency),
// whichever node started this launcher, and exits with its exit code.
'use strict';
const path = require('node:path');
const { spawn } = require('node:child_process');

const main = path.join(__dirname, 'main.ts');
const major = Number(process.versions.node.split('.')[0]);
if (major >= 24) {
  import(require('node:url').pathToFileURL(main).href).catch((err) => {
    process.stderr.write(`switchyard: ${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  });
} else {
  let node;
  try {
    node = path.join(path.dirname(require.resolve('node/package.json', { paths: [path.join(__dirname, '..')] })), 'bin', 'node');
  } catch {
    process.stderr.write('switchyard: needs Node 24; run `npm install` in the Switchyard checkout (it brings node@24)\n');
    process.exit(3);
  }
  const child = spawn(node, [main, ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
