/**
 * One line per failure (docs/plugin-loader.md, "Liveness"): when an isolated plugin's worker or
 * process ends, `@effect/platform`'s Worker logs the platform's own error, its stack included, at
 * warning level, from a fiber of its own; the registry then says the same end in one line that names
 * the plugin and the reason (`plugin <name> lost: its worker ended: …`). The platform's line is
 * moved to debug level: shown only when the log level lets debug lines through.
 *
 * How: the loggers of the fibers the platform forks for one worker are those of the fiber that made
 * it (a forked fiber inherits its parent's FiberRefs), so the worker is made with each logger
 * wrapped: a line annotated `package=@effect/platform` at warning level is given to the logger at
 * debug level, or dropped when the minimum level (where the worker is made) is above debug.
 * Everything else passes.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as HashSet from "effect/HashSet"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"

/**
 * The platform's warnings at debug level, for the loggers of `effect` and the fibers it forks.
 * @since 0.1.0
 * @category internals
 */
export const platformWarningsAtDebug = <A, Err, R>(effect: Effect.Effect<A, Err, R>): Effect.Effect<A, Err, R> =>
  // The minimum level where the worker is made: the platform's fibers inherit it.
  Effect.flatMap(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) =>
    Effect.locallyWith(effect, FiberRef.currentLoggers, (loggers) =>
      HashSet.map(loggers, (logger) =>
        Logger.make<unknown, void>((options) => {
          const platform = Option.getOrUndefined(HashMap.get(options.annotations, "package")) === "@effect/platform"
          if (!platform || options.logLevel._tag !== "Warning") return void logger.log(options)
          if (LogLevel.greaterThan(minimum, LogLevel.Debug)) return
          logger.log({ ...options, logLevel: LogLevel.Debug })
        }))))
