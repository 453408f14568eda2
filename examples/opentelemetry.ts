/**
 * Tracing the library example with OpenTelemetry (the README's snippet is the region below, checked
 * by the tests, which also run it with an in-memory exporter).
 * `@effect/opentelemetry` turns Effect's spans into OpenTelemetry spans: City's `city.turn`,
 * `city.step`, `city.invoke`, `city.plugin.initialize`, ... with their attributes.
 */
// #region readme
import { NodeSdk } from "@effect/opentelemetry"
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect } from "effect"
import { main } from "./library.js"

// The OpenTelemetry SDK as a Layer: every span City makes goes to `spanProcessor`
// (in production: a BatchSpanProcessor over an OTLP exporter).
export const tracing = (spanProcessor: SpanProcessor) =>
  NodeSdk.layer(() => ({ resource: { serviceName: "city-example" }, spanProcessor }))

export const traced = (root: string, spanProcessor: SpanProcessor) =>
  main(root).pipe(Effect.withSpan("example"), Effect.provide(tracing(spanProcessor)))
// #endregion readme
