// The length in lines of every function in the TypeScript sources given on the command line
// (declarations, methods, arrow functions and function expressions), read with the TypeScript
// compiler's own parser: one JSON line per function, {file, name, line, lines}. The Python test
// tests/test_structure.py fails on any over its limit.
const fs = require('fs');
const ts = require('typescript');

function nameOf(node, source) {
  if (node.name) {
    return node.name.getText(source);
  }
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) {
    return parent.name.getText(source);
  }
  if (parent && ts.isPropertyAssignment(parent)) {
    return parent.name.getText(source);
  }
  return '(anonymous)';
}

for (const file of process.argv.slice(2)) {
  const text = fs.readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = node => {
    if (ts.isFunctionLike(node) && node.body) {
      const first = source.getLineAndCharacterOfPosition(
        node.getStart(source)
      ).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const row = {
        file,
        name: nameOf(node, source),
        line: first + 1,
        lines: last - first + 1
      };
      process.stdout.write(JSON.stringify(row) + '\n');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
