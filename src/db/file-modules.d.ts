// Bun's `with { type: "file" }` imports give the file's path: on disk in development, inside the
// executable ($bunfs) after `bun build --compile`, which is how the binary carries PGlite's assets.
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "*.data" {
  const path: string;
  export default path;
}
