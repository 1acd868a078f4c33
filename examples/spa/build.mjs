// Builds the app into dist/ (or --outdir=DIR): the bundle (src/main.js and
// its npm dependencies, by esbuild) and the static files. `node build.mjs --serve`
// serves dist/ on http://localhost:5173 and rebuilds on change; point it
// at a gateway with ?api=http://localhost:8080/query and start the
// gateway with CORS_ORIGINS=http://localhost:5173.
import * as esbuild from 'esbuild';
import { cpSync, mkdirSync, rmSync } from 'node:fs';

const outdir = process.argv.find((a) => a.startsWith('--outdir='));
const dist = outdir
  ? outdir.slice('--outdir='.length).replace(/\/?$/, '/')
  : new URL('./dist/', import.meta.url).pathname;
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
cpSync(new URL('./static/', import.meta.url).pathname, dist, { recursive: true });

const options = {
  entryPoints: ['src/main.js'],
  bundle: true,
  format: 'esm',
  target: 'es2020',
  minify: !process.argv.includes("--dev"),
  sourcemap: true,
  outfile: dist + 'app.js',
  logLevel: 'info',
};
if (process.argv.includes('--serve')) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
  await ctx.serve({ servedir: dist, port: 5173 });
} else {
  await esbuild.build(options);
}
