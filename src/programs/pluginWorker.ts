/**
 * The main of an isolated plugin's worker thread (docs/plugin-loader.md, "Isolation"), built into
 * `dist/city-worker.mjs` by scripts/bundle.mjs as one ES module whose `effect` and `@effect/*`
 * imports stay imports: the worker's runtime is then the very `effect` its plugin gets as a
 * host-provided module, one copy in the thread. It serves the protocol of src/schema/Isolation.ts
 * (services/isolation/internal/pluginWorker.ts) until the host closes it or ends the thread.
 *
 * The same module is the main of a plugin's child process (`"isolation": "process"`): the runner
 * then serves over the process's IPC channel (`process.send`). Such a process leads a process group
 * of its own; when its channel closes without the host ending it (the host was killed outright and
 * ran no exit hook), it kills that group, itself and whatever its plugin spawned, rather than live
 * on unowned (docs/plugin-loader.md, "What each mode caps"); and it answers the host's question of
 * what it is running on a side channel served by a thread of its own (processBlame.ts).
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeWorkerRunner from "@effect/platform-node/NodeWorkerRunner"
import * as WorkerRunner from "@effect/platform/WorkerRunner"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { fstatSync, writeSync } from "node:fs"
import { isMainThread } from "node:worker_threads"
import * as PluginWorker from "../services/isolation/internal/pluginWorker.ts"
import { blameFd, uncaughtMarker } from "../schema/Isolation.ts"
import { startProcessBlame } from "../services/isolation/internal/processBlame.ts"

if (isMainThread && process.send !== undefined) {
  process.on("disconnect", () => process.kill(0, "SIGKILL"))
  // An uncaught throw (an unhandled rejection too) ends the process, saying what on stderr in one
  // marked line for the host to read (workerThread.ts), as a worker thread's end says it.
  process.on("uncaughtException", (error) => {
    const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
    try {
      writeSync(2, `\n${uncaughtMarker}${what.replace(/\s+/g, " ")}\n`)
    } finally {
      process.exit(1)
    }
  })
  // The side channel on which the host asks what the process is running (processBlame.ts).
  startProcessBlame((() => {
    try {
      return fstatSync(blameFd).isSocket()
    } catch {
      return false
    }
  })())
}

Effect.runFork(
  WorkerRunner.launch(PluginWorker.layer.pipe(Layer.provide(Layer.merge(NodeWorkerRunner.layer, NodeFileSystem.layer))))
)
