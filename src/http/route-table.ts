/**
 * The finished route table, looked up by the kernel when it needs more than Elysia tells a hook: which
 * methods a path has (405 with `Allow`) and what a route's values are checked against, and when.
 */
import type { RouteShape } from "./openapi-errors";
import { compileRouteChecks, type RouteChecks } from "./request-values";

export type { RouteShape };

interface Pattern {
  matcher: RegExp;
  methods: Set<string>;
}

export class RouteTable {
  private byKey: Map<string, RouteChecks> | undefined;
  private patterns: Pattern[] | undefined;

  constructor(private readonly routes: () => readonly RouteShape[]) {}

  /** The checks of the route Elysia matched, by method and its own path (":param"). */
  checksOf(method: string, path: string): RouteChecks | undefined {
    if (this.byKey === undefined) {
      const routes = this.routes();
      if (routes.length === 0) return undefined;
      this.byKey = new Map(
        routes.map((route) => [`${route.method} ${route.path}`, compileRouteChecks(route)]),
      );
    }
    return this.byKey.get(`${method} ${path}`);
  }

  /** The methods routes answer at this concrete path; empty when the path is unknown. */
  methodsAt(pathname: string): string[] {
    const normalised = pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname;
    const methods = new Set<string>();
    for (const pattern of this.compiled()) {
      if (pattern.matcher.test(normalised)) for (const method of pattern.methods) methods.add(method);
    }
    return [...methods].sort();
  }

  private compiled(): Pattern[] {
    if (this.patterns !== undefined) return this.patterns;
    const byPath = new Map<string, Set<string>>();
    for (const route of this.routes()) {
      if (route.method === "ALL" || route.path.includes("*")) continue;
      const path = route.path.length > 1 && route.path.endsWith("/") ? route.path.slice(0, -1) : route.path;
      const methods = byPath.get(path) ?? new Set<string>();
      methods.add(route.method);
      byPath.set(path, methods);
    }
    const patterns = [...byPath].map(([path, methods]) => {
      const source = path
        .split("/")
        .map((segment) =>
          segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
        )
        .join("/");
      return { matcher: new RegExp(`^${source}$`), methods };
    });
    if (patterns.length > 0) this.patterns = patterns;
    return patterns;
  }
}
