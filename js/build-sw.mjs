// trunk post_build hook: writes sw.js into the staged build from js/sw-template.js, with the
// build's own file list (every staged file, hashed names included) and a version hashed from
// their contents. Nothing is listed by hand. Also checks the manifest's icons exist.
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";

const staging = process.env.TRUNK_STAGING_DIR;
if (!staging) {
  console.error("build-sw.mjs runs as trunk's post_build hook (TRUNK_STAGING_DIR is not set)");
  process.exit(1);
}
const source = process.env.TRUNK_SOURCE_DIR || process.cwd();

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

const files = walk(staging)
  .map((path) => "/" + relative(staging, path).split(sep).join("/"))
  .filter((path) => path !== "/sw.js")
  .sort();
const hash = createHash("sha256");
for (const path of files) {
  hash.update(path);
  hash.update(readFileSync(join(staging, path)));
}
const version = hash.digest("hex").slice(0, 16);
// The page itself is cached under "/" (what navigations ask for) as well as its file name.
const shell = ["/", ...files];

const manifest = JSON.parse(readFileSync(join(staging, "public/manifest.webmanifest"), "utf8"));
for (const icon of manifest.icons) {
  if (!files.includes(icon.src)) {
    console.error(`manifest.webmanifest names ${icon.src}, which the build does not contain`);
    process.exit(1);
  }
}

const template = readFileSync(join(source, "js/sw-template.js"), "utf8");
writeFileSync(
  join(staging, "sw.js"),
  template.replace("__VERSION__", version).replace("__SHELL__", JSON.stringify(shell, null, 2)),
);
console.log(`sw.js: ${shell.length} shell files, version ${version}`);
