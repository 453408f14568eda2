/**
 * The City for tests (docs/library.md, "Testing"): `City.layer` with the same options and the same
 * inference of start plugins, on a state root of its own and with short deadlines.
 *
 * Decisions:
 * - **A fresh temporary root, never `$HOME`.** Without `root`, the City's state root is a new
 *   folder under the system's temp folder (`city-test-XXXXXX`, made through the platform
 *   `FileSystem` on Node), removed with everything in it when the layer's Scope closes, after the
 *   City has closed (so a plugin's dispose may still write to its storage). `$CITY_ROOT` and `~/.city`
 *   are never read nor made. The root is a real folder, not `MemoryFileSystem`: a plugin's
 *   `ctx.storage.path` is a path its code may hand to any file API, so it must exist on disk.
 *   An explicit `root` is used as given and left in place.
 * - **Short deadlines.** `initializeTimeout`, `disposeTimeout` and `drainTimeout` are 500 ms
 *   (`defaults`) instead of 30 s, 10 s and 10 s: a plugin stuck in initialize or dispose fails its
 *   test in half a second with the City's own `timed-out` report, rather than running into the test
 *   runner's timeout; an in-memory plugin on a loaded machine still has hundreds of times what it
 *   needs. Each can be given as for `City.layer`. Under a `TestClock` (`it.effect`) the deadlines
 *   wait for the test to move the clock, as every Effect timeout does.
 * - Everything else is `City.layer`'s: close order, dispose order, failures, start plugins
 *   (`required`, dependencies, the requirements of their initializes).
 * @since 0.1.0
 */
import type * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as City from "../City.ts"
import * as TestDeadlines from "./internal/testDeadlines.ts"

/**
 * The deadlines of a test City: 500 ms for each initialize, each dispose, and the drain of
 * running Steps at close.
 * @since 0.1.0
 * @category constants
 */
export const defaults = TestDeadlines.defaults

/**
 * A fresh state root under the system's temp folder, removed (with everything in it) when the
 * Scope closes.
 * @since 0.1.0
 * @category constructors
 */
export const tempRoot: Effect.Effect<string, PlatformError.PlatformError, Scope.Scope> = Effect.flatMap(
  FileSystem.FileSystem,
  (fs) => fs.makeTempDirectoryScoped({ prefix: "city-test-" })
).pipe(Effect.provide(NodeFileSystem.layer))

/** The options with the test deadlines where none is given, and the root. */
const withDefaults = <O extends City.CityOptions>(options: O, root: string) => ({
  ...options,
  root,
  ...TestDeadlines.withDeadlines(options)
})

/**
 * A test City in the current Scope: `City.make` on a temporary root (unless `root` is given) with
 * the short deadlines of `defaults` (unless given). Closing the Scope closes the City, then
 * removes the temporary root.
 * @since 0.1.0
 * @category constructors
 */
export const make = <const P extends ReadonlyArray<City.StartPlugin<unknown>> = readonly []>(
  options: City.CityLayerOptionsFor<P> = {}
): Effect.Effect<
  City.CityShape,
  City.CityBuildError | City.RequiredStartFailure<P> | PlatformError.PlatformError,
  Scope.Scope | City.StartRequirements<P>
> =>
  Effect.flatMap(
    options.root === undefined ? tempRoot : Effect.succeed(options.root),
    (root) => City.make<P>(withDefaults(options, root))
  )

/**
 * A test City as a Layer: `City.layer` with the same options and start plugins, on a temporary
 * root removed when the layer's Scope closes, with short deadlines (see `defaults`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { City } from "effect-city"
 * import { Plugin } from "effect-city/plugin"
 * import { CityTest } from "effect-city/testing"
 *
 * const hello = Plugin.make({ name: "hello", initialize: Effect.succeed({ system: () => Effect.succeed("Say hello.") }) })
 *
 * const program = Effect.flatMap(City.City, (city) => city.calls({ agent: { id: "ada" }, workspace: { id: "w", path: "/tmp" } }).system())
 *
 * // No root, no $HOME: the City lives in a temporary folder for the program's duration.
 * Effect.runPromise(program.pipe(Effect.provide(CityTest.layer({ plugins: [hello] }))))
 * ```
 * @since 0.1.0
 * @category layers
 */
export const layer = <const P extends ReadonlyArray<City.StartPlugin<unknown>> = readonly []>(
  options: City.CityLayerOptionsFor<P> = {}
): Layer.Layer<
  City.City,
  City.CityBuildError | City.RequiredStartFailure<P> | PlatformError.PlatformError,
  City.StartRequirements<P>
> =>
  Layer.scoped(City.City, make(options))
