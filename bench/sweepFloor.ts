/**
 * The Effect floor of `bench/sweep.bench.ts`: the least an Effect program on the public API does to
 * run the sweep's commands, as a process started like `city` (bundled, `NodeRuntime.runMain` over
 * `NodeContext.layer`): `Effect.forEach` of an `Effect.async` around `child_process.spawn` (its own
 * process group, stderr read, as city's runner does), `--concurrency` at a time. No state root,
 * no records, no log, no journal: the sweep's figure against it is what city's own work costs.
 *
 *   node sweepFloor.cjs <argvs.json> <concurrency>   (bundled by the sweep bench; argvs: [command, ...args][])
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"

const argvs: ReadonlyArray<ReadonlyArray<string>> = JSON.parse(readFileSync(process.argv[2]!, "utf8"))
const concurrency = Number(process.argv[3] ?? "4")

const call = ([command, ...args]: ReadonlyArray<string>) =>
  Effect.async<number, Error>((resume) => {
    const child = spawn(command!, args, { stdio: ["ignore", "ignore", "pipe"], detached: true })
    child.stderr?.resume()
    child.on("error", (error) => resume(Effect.fail(error)))
    child.on("close", (code) => resume(code === 0 ? Effect.succeed(0) : Effect.fail(new Error(`exit ${code}`))))
  })

NodeRuntime.runMain(Effect.forEach(argvs, call, { concurrency, discard: true }).pipe(Effect.provide(NodeContext.layer)))
