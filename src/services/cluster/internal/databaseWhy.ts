/**
 * Why the fleet's database failed, in words: the messages of an error and of its causes, each
 * once (`Connection error: Connection terminated unexpectedly`), for the one-line failures of a
 * sweep (sweep.ts) and of an answer's save (keptAnswers.ts).
 * @since 0.1.0
 */
import { PersistenceError } from "@effect/cluster/ClusterError"
import { oneLine } from "../../../schema/OneLine.ts"

/**
 * The messages of `error` and its causes (at most five deep), each once, on one line of at most
 * 300 characters. A `PersistenceError` has no message of its own: its cause says why.
 * @since 0.1.0
 * @category internals
 */
export const databaseWhy = (error: unknown): string => {
  const messages: Array<string> = []
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    if (at.message !== "" && !(at instanceof PersistenceError) && !messages.includes(at.message)) messages.push(at.message)
  }
  return oneLine(messages.length === 0 ? "the database failed" : messages.join(": "), 300)
}
