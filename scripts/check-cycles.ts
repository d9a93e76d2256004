/**
 * Fails on any import cycle among the project's own files, type-only imports included: a cycle of types
 * still means two files cannot be read (or moved) one without the other. Fails too on an import that points
 * back up a layer (LAYER_RULES below): the engine imports nothing of the service, and within the
 * recommendation module a request's path reads top-down (routes → use cases → respond → ranking → serving).
 *
 * The graph is TypeScript's own: every `import`, `import type`, `export … from` and `import("…")` of each
 * file the project's tsconfig includes (or only those under the given folders), resolved with that tsconfig. Cycles are the strongly connected
 * components of that graph (Tarjan); each is printed with one closed path through it.
 *
 *   bun run scripts/check-cycles.ts [folder…]   (default: every file tsconfig.json includes)
 */
import { dirname, relative, resolve } from "node:path";
import ts from "typescript";

const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
const roots = process.argv.slice(2).map((folder) => resolve(root, folder));

const configPath = resolve(root, "tsconfig.json");
const configFile = ts.readConfigFile(configPath, ts.sys.readFile);
const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
const host = ts.createCompilerHost(parsed.options);

const files = parsed.fileNames
  .map((file) => resolve(file))
  .filter((file) => /\.(ts|tsx)$/.test(file) && !file.endsWith(".d.ts"))
  .filter((file) => roots.length === 0 || roots.some((r) => file.startsWith(`${r}/`)));
const own = new Set(files);

function specifiers(file: string): string[] {
  const source = ts.createSourceFile(file, ts.sys.readFile(file) ?? "", ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal)) found.push(literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const graph = new Map<string, string[]>();
for (const file of files) {
  const edges = new Set<string>();
  for (const spec of specifiers(file)) {
    const resolved = ts.resolveModuleName(spec, file, parsed.options, host).resolvedModule;
    if (!resolved || resolved.isExternalLibraryImport) continue;
    const target = resolve(resolved.resolvedFileName);
    if (own.has(target) && target !== file) edges.add(target);
  }
  graph.set(file, [...edges].sort());
}

// Tarjan's strongly connected components, iterative so deep graphs cannot overflow the stack.
const index = new Map<string, number>();
const low = new Map<string, number>();
const onStack = new Set<string>();
const stack: string[] = [];
const components: string[][] = [];
let counter = 0;
for (const start of graph.keys()) {
  if (index.has(start)) continue;
  const work: { node: string; next: number }[] = [{ node: start, next: 0 }];
  index.set(start, counter);
  low.set(start, counter++);
  stack.push(start);
  onStack.add(start);
  while (work.length > 0) {
    const frame = work[work.length - 1]!;
    const edges = graph.get(frame.node) ?? [];
    if (frame.next < edges.length) {
      const to = edges[frame.next++]!;
      if (!index.has(to)) {
        index.set(to, counter);
        low.set(to, counter++);
        stack.push(to);
        onStack.add(to);
        work.push({ node: to, next: 0 });
      } else if (onStack.has(to)) {
        low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
      }
      continue;
    }
    work.pop();
    const parent = work[work.length - 1];
    if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
    if (low.get(frame.node) === index.get(frame.node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1) components.push(component);
    }
  }
}

/** One closed path inside a component: breadth-first from its first member back to itself. */
function closedPath(component: string[]): string[] {
  const members = new Set(component);
  const first = [...component].sort()[0]!;
  const previous = new Map<string, string>();
  const queue = [first];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === first) {
        const path = [first];
        for (let at = node; at !== first; at = previous.get(at)!) path.splice(1, 0, at);
        return [...path, first];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return component;
}

const name = (file: string) => relative(root, file);

/** `from` (a folder or file, relative to the root) may import nothing under any of `not`. */
const LAYER_RULES: readonly { from: string; not: readonly string[]; why: string }[] = [
  {
    from: "src/engine/",
    not: ["src/"],
    why: "the engine is pure algorithms: it imports nothing of the service outside src/engine",
  },
  {
    from: "src/modules/recommendations/serving/",
    not: ["ranking/", "use-cases/", "respond.ts", "index.ts"].map((p) => `src/modules/recommendations/${p}`),
    why: "serving state and caches sit below ranking, respond.ts and the use cases",
  },
  {
    from: "src/modules/recommendations/ranking/",
    not: ["use-cases/", "respond.ts", "index.ts"].map((p) => `src/modules/recommendations/${p}`),
    why: "ranking sits below respond.ts and the use cases",
  },
  {
    from: "src/modules/",
    not: ["src/deps.ts", "src/app.ts", "src/main.ts", "src/serve.ts"],
    why: "modules are handed their dependencies; nothing imports the composition root back",
  },
];

const upward: string[] = [];
for (const [file, edges] of graph) {
  const from = name(file);
  for (const rule of LAYER_RULES) {
    if (!from.startsWith(rule.from)) continue;
    for (const target of edges.map(name)) {
      const allowedInside = rule.from.endsWith("/") && target.startsWith(rule.from);
      if (!allowedInside && rule.not.some((prefix) => target.startsWith(prefix))) {
        upward.push(`${from} -> ${target}: ${rule.why}`);
      }
    }
  }
}
if (upward.length > 0) {
  for (const line of upward) console.error(`import against the layers: ${line}`);
}

if (components.length === 0) {
  console.log(`no import cycles among ${files.length} files`);
  if (upward.length > 0) process.exit(1);
  console.log(`no import against the layers (${LAYER_RULES.length} rules)`);
} else {
  for (const component of components) {
    console.error(`import cycle among ${component.length} files:`);
    console.error(`  ${closedPath(component).map(name).join("\n    -> ")}`);
    if (component.length > 2) console.error(`  all members: ${component.map(name).sort().join(", ")}`);
  }
  console.error(`${components.length} import cycle(s); type-only imports count too`);
  process.exit(1);
}
