import { afterAll } from "bun:test";
import { removeTrackedTempDirs } from "./helpers/temp-dirs";

// Preloaded by bun test (bunfig.toml). Tests must not depend on the developer's environment.
process.env.TZ = "UTC";

afterAll(() => removeTrackedTempDirs());
