/**
 * The house's tracing switches, apart from the public Observability module (which holds the span
 * names and the decisions): spans on measured paths are made only under an installed tracer.
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"

/**
 * Effect's default tracer, the one that records nothing.
 * @since 0.1.0
 * @category internals
 */
export const defaultTracer: Tracer.Tracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/**
 * Wraps a lifecycle checkpoint (initialize, dispose) in its span when a tracer is installed; under
 * Effect's default tracer, which exports nothing, it runs as it is. `parent`: the span of the call
 * that asked for it, when the checkpoint's fiber does not carry it (a dispose runs on the fiber refs
 * of its initialize).
 * @since 0.1.0
 * @category internals
 */
export const traceLifecycle = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  name: "city.plugin.initialize" | "city.plugin.dispose",
  attributes: Record<string, unknown>,
  parent?: Tracer.AnySpan | undefined
): Effect.Effect<A, E, R> =>
  Effect.tracerWith((tracer) =>
    tracer === defaultTracer
      ? effect
      : Effect.withSpan(effect, name, { attributes, captureStackTrace: false, ...(parent === undefined ? {} : { parent }) })
  )

/**
 * Whether the fiber's tracer is one that someone installed (`Effect.withTracer`, `Layer.setTracer`,
 * `@effect/opentelemetry`) rather than Effect's default, which exports nothing. A Turn reads it
 * once; its Steps make spans only when it is true.
 * @since 0.1.0
 * @category internals
 */
export const isTracing: Effect.Effect<boolean> = Effect.map(Effect.tracer, (tracer) => tracer !== defaultTracer)
