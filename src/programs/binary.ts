/**
 * The `city` binary (`bin/city.mjs` runs its bundle, `dist/city.cjs`, and calls `main`): the
 * process around the front in `cli.ts`. It builds the invocation from `process`, runs the command,
 * and exits with its code.
 *
 * Exit codes: 0 success, 1 some endpoint failed (or the state root failed us), 2 refused input
 * (invalid declaration, unknown capability or peer, bad usage), 130 interrupted by Ctrl-C
 * (SIGINT) and 143 by SIGTERM: the verb is interrupted, its finalizers release the root lock and
 * terminate the running commands, then it says what finished and what was interrupted
 * (`output.reportInterrupted`, docs/cli.md "Interrupted").
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { HostModules } from "../services/entry/HostModules.ts"
import { ModuleImporter } from "../services/entry/ModuleImporter.ts"
import { WorkerScript } from "../services/isolation/WorkerScript.ts"
import { run } from "./cli.ts"
import { Invocation, fromProcess } from "./invocation.ts"
import { runMain, stoppedGracefully } from "./main.ts"
import * as Print from "./print.ts"

/**
 * What the binary gives the program: its own `import()`, for plugin entries (the bundle is compiled
 * as a script through V8's code cache, and such code cannot import modules itself).
 * @since 0.1.0
 */
export interface BinaryHost {
  readonly importModule: (url: string) => Promise<unknown>
}

/**
 * Runs the `city` command line of this process and exits with its code.
 * @since 0.1.0
 */
export const main = (host?: BinaryHost): void => {
  // Which signal stopped the process (its exit code). The listeners stay for the process's life:
  // a library's exit hook (`signal-exit`, under the root lock's `proper-lockfile`) raises the
  // signal again when it finds itself the only listener, which would kill the process in the
  // middle of its graceful stop, whatever order the modules were loaded in. So a second signal
  // does not cut the stop short; the finalizer deadline bounds it (docs/cli.md, "Commands and signals").
  let signal: "SIGINT" | "SIGTERM" | undefined
  process.on("SIGINT", () => {
    signal ??= "SIGINT"
  })
  process.on("SIGTERM", () => {
    signal ??= "SIGTERM"
  })

  let code = 0

  const program = Effect.flatMap(fromProcess, (invocation) =>
    run(process.argv.slice(2)).pipe(Effect.provideService(Invocation, invocation))).pipe(
      Effect.tap((exitCode) =>
        Effect.sync(() => {
          code = exitCode
        })
      ),
      Print.withLogger,
      // What the CLI uses of Node: its file system, paths and terminal (not NodeContext, whose
      // command executor and workers no verb uses and every start would evaluate).
      Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer))
    )

  // Folder plugins get the installed package's modules: its `effect` (resolved from the bundle's
  // place) and the plugin entry built beside the bundle (scripts/bundle.mjs), since the bundle's
  // own copies cannot be imported by URL (src/services/entry/HostModules.ts).
  const hosted = host === undefined ? program : program.pipe(
    Effect.provideService(ModuleImporter, { import: host.importModule }),
    Effect.provideService(HostModules, {
      resolveFrom: import.meta.url,
      plugin: new URL("city-plugin.mjs", import.meta.url).href
    }),
    Effect.provideService(WorkerScript, { url: new URL("city-worker.mjs", import.meta.url).href })
  )
  runMain(hosted, {
    teardown: (exit, onExit) => {
      if (Exit.isSuccess(exit)) return onExit(code)
      // The daemon's stop on a signal is its normal end: exit 0 once it closed gracefully.
      if (Exit.isInterrupted(exit)) return onExit(stoppedGracefully() ? 0 : signal === "SIGTERM" ? 143 : 130)
      onExit(1)
    }
  })
}
