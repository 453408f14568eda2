/**
 * The short deadlines of the test Cities (`CityTest`, `PluginHarness`), defined once: 500 ms for
 * each initialize, each dispose, and the drain of running Steps at close (CityTest.ts has the why).
 * @since 0.1.0
 */
import type { CityOptions } from "../../services/city/CityConfig.ts"

/**
 * The deadlines of a test City: 500 ms for each initialize, each dispose, and the drain of
 * running Steps at close.
 * @since 0.1.0
 * @category constants
 */
export const defaults = {
  initializeTimeout: "500 millis",
  disposeTimeout: "500 millis",
  drainTimeout: "500 millis"
} as const satisfies CityOptions

/**
 * The deadlines of `options`, each one not given taken from `defaults`.
 * @since 0.1.0
 * @category internals
 */
export const withDeadlines = (options: CityOptions) => ({
  initializeTimeout: options.initializeTimeout ?? defaults.initializeTimeout,
  disposeTimeout: options.disposeTimeout ?? defaults.disposeTimeout,
  drainTimeout: options.drainTimeout ?? defaults.drainTimeout
})
