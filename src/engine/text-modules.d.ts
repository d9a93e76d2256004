// Bun imports these as text (`with { type: "text" }`), which also embeds them in compiled binaries.
declare module "*.c" {
  const source: string;
  export default source;
}
