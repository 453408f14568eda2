/**
 * `npm start`: the demo program (src/programs/demo.ts) on Node, through `runMain` (the finalizer
 * deadline). `npm run demo:traced` runs the same program with OpenTelemetry (scripts/demo-traced.ts).
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { program } from "./demo.ts"
import { runMain } from "./main.ts"

runMain(program.pipe(Effect.scoped, Effect.provide(NodeContext.layer)))
