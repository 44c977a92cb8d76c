/*
 * Writes js/src/generated/schema_types.ts, the TypeScript types of every document jupyter_brrr
 * writes (the raw JSON, as written), from the Python schema modules: the one source.
 *
 *   python -m jupyter_brrr.schema.export --typescript | node js/generate-schema-types.mjs [OUT]
 *
 * (`jlpm schema:types` runs both.) The input is one JSON Schema whose `$defs` name every type
 * (jupyter_brrr/schema/export.py typescript_input) and the constants the browser shares with
 * Python; json-schema-to-typescript makes one interface per named type, and the constants are
 * written after them. tests/test_schema_types.py fails when the checked-in file is stale.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';
import prettier from 'prettier';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out =
  process.argv[2] ??
  path.join(root, 'js', 'src', 'generated', 'schema_types.ts');
// Read as a stream: fs.readFileSync(0) fails (EAGAIN) on a non-blocking pipe.
const chunks = [];
for await (const chunk of process.stdin) {
  chunks.push(chunk);
}
const input = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const banner = `/*
 * Generated from the Python schema (jupyter_brrr/schema/) by js/generate-schema-types.mjs:
 * do not edit by hand. Regenerate with \`jlpm schema:types\`.
 *
 * The documents as written (the raw JSON); js/src/schema.ts reads them into the types the
 * views use.
 */`;

// Each named type as an interface of this project's style: IRaw<title> (IRawReport ...), the
// document as written, apart from the parsed IReport of js/src/schema.ts.
const named = title => `IRaw${title}`;
const schema = JSON.parse(
  JSON.stringify(input.schema).replace(
    /"#\/\$defs\/(\w+)"/g,
    (_, title) => `"#/$defs/${named(title)}"`
  )
);
schema.$defs = Object.fromEntries(
  Object.entries(schema.$defs).map(([title, body]) => [
    named(title),
    { ...body, title: named(title) }
  ])
);
schema.title = named(schema.title);

const types = await compile(schema, schema.title, {
  bannerComment: banner,
  // The types say what the writer writes; a reader still accepts keys it does not know.
  additionalProperties: false,
  // The tables' row types are referred to only by the tables' "x-row".
  unreachableDefinitions: true,
  format: false
});

const constants = Object.entries(input.constants).map(([name, value]) => {
  const literal = JSON.stringify(value);
  return Array.isArray(value)
    ? `export const ${name} = ${literal} as const;`
    : `export const ${name} = ${literal};`;
});

const text = `${types}\n// The constants the browser shares with Python.\n${constants.join('\n')}\n`;
const packageJson = JSON.parse(
  fs.readFileSync(path.join(root, 'package.json'), 'utf8')
);
const formatted = await prettier.format(text, {
  ...packageJson.prettier,
  parser: 'typescript'
});
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, formatted);
