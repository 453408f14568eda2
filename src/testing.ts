/**
 * `effect-city/testing`: the test kit for an application's own tests, apart from the API it runs
 * with (docs/design.md, "Layout": "test doubles for users' tests"; docs/library.md, "Testing").
 *
 * - `CityTest`: `City.layer` for tests, on a temporary state root removed when its Scope closes
 *   (never `$HOME`), with deadlines of 500 ms instead of seconds.
 * - `PluginHarness`: one plugin in a City of its own, called as the City calls it (actions by name
 *   or by reference, hooks, system text, availability, skills) for a made-up caller, its dispose
 *   reported.
 * - `MemoryFileSystem`: a platform `FileSystem` held in memory, for a state root (`StateRoot`) or
 *   plugin code on `FileSystem` that must not touch a disk.
 * - `ScriptedHost`: an `EndpointHost` whose endpoints' states the test sets and whose Turns it
 *   drives, for testing what a host application does around owed reloads and removals without an
 *   agent runtime.
 *
 * ```ts
 * import { CityTest, MemoryFileSystem, PluginHarness, ScriptedHost } from "effect-city/testing"
 * ```
 * @module
 * @since 0.1.0
 */

/**
 * The test City: `City.layer` on a temporary root, with short deadlines.
 * @since 0.1.0
 */
export * as CityTest from "./layers/CityTest.ts"
/**
 * A platform `FileSystem` held in memory: a state root, or a plugin's files, that never touch a disk.
 * @since 0.1.0
 */
export * as MemoryFileSystem from "./services/files/MemoryFileSystem.ts"
/**
 * One plugin under test, in a City of its own: its calls, its skills, its dispose.
 * @since 0.1.0
 */
export * as PluginHarness from "./layers/PluginHarness.ts"
/**
 * The "Scripted" endpoint host, for tests: the test sets each endpoint's state and drives its Turns.
 * @since 0.1.0
 */
export * as ScriptedHost from "./services/live/ScriptedHost.ts"
