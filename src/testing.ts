/**
 * `effect-city/testing`: the test doubles for an application's own tests, apart from the API it
 * runs with (docs/design.md, "Layout": "test doubles for users' tests").
 *
 * - `ScriptedHost`: an `EndpointHost` whose endpoints' states the test sets and whose Turns it
 *   drives, for testing what a host application does around owed reloads and removals without an
 *   agent runtime.
 *
 * ```ts
 * import { ScriptedHost } from "effect-city/testing"
 * ```
 * @module
 * @since 0.1.0
 */

/**
 * The "Scripted" endpoint host, for tests: the test sets each endpoint's state and drives its Turns.
 * @since 0.1.0
 */
export * as ScriptedHost from "./services/live/ScriptedHost.ts"
/**
 * A platform `FileSystem` held in memory: a state root, or a plugin's files, that never touch a disk.
 * @since 0.1.0
 */
export * as MemoryFileSystem from "./services/files/MemoryFileSystem.ts"
