/**
 * `npm run demo:traced`: the demo of `npm start` with OpenTelemetry wired in. Every span City makes
 * (`city.turn`, `city.step`, `city.invoke`, `city.plugin.initialize`, `city.joint`, …) is exported
 * to the console here; in production put a BatchSpanProcessor over an OTLP exporter in its place.
 * `@effect/opentelemetry` stays a devDependency: the shipped programs never import it. It lives in
 * `scripts/`, not among the shipped examples, because it runs the repository's demo program.
 */
import { NodeSdk } from "@effect/opentelemetry"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { ConsoleSpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect } from "effect"
import { program } from "../src/programs/demo.ts"
import { runMain } from "../src/programs/main.ts"

const tracing = NodeSdk.layer(() => ({
  resource: { serviceName: "city-demo" },
  spanProcessor: new SimpleSpanProcessor(new ConsoleSpanExporter())
}))

runMain(program.pipe(Effect.withSpan("demo"), Effect.scoped, Effect.provide(tracing), Effect.provide(NodeContext.layer)))
