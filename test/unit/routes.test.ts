// One route table (src/protocol/routes.ts): the paths the client builds with
// routePath are the ones the backend's router matches, route by route.

import { describe, expect, it } from "vitest";
import { matchRoute } from "../../src/backend/http/router.js";
import { ROUTE_NAMES, ROUTES, type RouteName, type RouteParams, routePath } from "../../src/protocol/routes.js";

/** A value for every parameter of a route's path, awkward on purpose (a space and a slash). */
function sampleParams(name: RouteName): RouteParams<RouteName> {
  const params: Record<string, string> = {};
  for (const segment of ROUTES[name].path.split("/")) {
    if (segment.startsWith(":")) params[segment.slice(1)] = `${segment.slice(1)} x/y`;
  }
  return params as RouteParams<RouteName>;
}

describe("routePath", () => {
  it("builds, for every route, a path the router matches to that route with the same parameters", () => {
    for (const name of ROUTE_NAMES) {
      const params = sampleParams(name);
      const matched = matchRoute(ROUTES[name].method, routePath(name, params));
      expect({ name: matched.name, params: matched.params }).toEqual({ name, params });
    }
  });

  it("encodes each parameter as one segment and the query as given, leaving out what is not set", () => {
    expect(
      routePath(
        "process.stop",
        { id: "my box", pid: "prc_1" },
        { grace_ms: 0, remove: true, force: false, wait_ms: undefined, path: "/workspace/a b&c" },
      ),
    ).toBe("/api/v1/sandbox/my%20box/processes/prc_1?grace_ms=0&remove=true&path=%2Fworkspace%2Fa%20b%26c");
    expect(routePath("health", {})).toBe("/api/v1/health");
  });
});
