/**
 * The retention of processed messages (docs/cluster.md, "Retention"): a message of the fleet stays
 * in the database after it was processed, with its reply, so that a resend with the same primary
 * key is answered from it rather than run again. Kept forever they would grow without bound;
 * `prune` deletes the processed messages older than a bound, with their replies, and every host's
 * runner runs it every hour for `retention` (default 7 days).
 *
 * Decision: the age of a message is the time in its id (a `Snowflake` holds the time it was made),
 * so no column is added to `@effect/cluster`'s tables. A resend of a message older than the
 * retention runs again: that is the horizon of deduplication, and a week is far beyond any retry.
 * A message not yet processed is never pruned. `@effect/cluster`'s `MessageStorage` has no way to
 * delete processed messages, so the delete itself is in the one module that touches the cluster's
 * tables (internal/clusterTables.ts).
 *
 * `run` prunes once at once, then every hour: it needs the cluster's tables, so it runs after a
 * runner's storage was built (ClusterHost.ts composes it so); on a fresh database the first run
 * then finds them, empty.
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { pruneProcessed } from "./internal/clusterTables.ts"

/**
 * How long a processed message is kept by default.
 * @since 0.1.0
 * @category constants
 */
const defaultRetention: Duration.Duration = Duration.days(7)

/**
 * Deletes the processed messages made before `before` (epoch milliseconds) and their replies: how
 * many messages went.
 * @since 0.1.0
 * @category utils
 */
export const prune = (before: number): Effect.Effect<number, SqlError, SqlClient.SqlClient> => pruneProcessed(before)

/**
 * Prunes what is older than `retention` now and then every hour, for as long as the scope lasts; a
 * failed run is logged and the next one tries again. Start it once the cluster's tables exist (a
 * runner's or a client's storage was built).
 * @since 0.1.0
 * @category utils
 */
export const run = (
  retention: Duration.DurationInput = defaultRetention
): Effect.Effect<void, never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.asVoid(Effect.forkScoped(Effect.repeat(
    Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) =>
      prune(now - Duration.toMillis(retention)).pipe(
        Effect.tap((gone) => gone > 0 ? Effect.logInfo(`pruned ${gone} processed cluster message(s)`) : Effect.void),
        Effect.catchAll((error) => Effect.logWarning(`pruning processed cluster messages failed: ${error.message}`))
      )),
    Schedule.spaced(Duration.hours(1))
  )))
