/**
 * A runner's message storage that keeps a message's answer until the database has it
 * (docs/cluster.md, "Faults"; ClusterRunner.ts).
 *
 * `@effect/cluster`'s entity manager saves the answer (the final reply) of a persisted message
 * through the message's `respond`, and gives up after 5 tries 200 ms apart: the message then stays
 * unprocessed and, while the runner lives, is never delivered again (the entity still counts it as
 * running), and whoever waits for its answer waits for good. A sweep's call is such a message (an
 * activity of the sweep's workflow), and so is the sweep itself: the database lost for more than a
 * second at the moment a call answered left the verb waiting until the host's daemon restarted.
 *
 * So every persisted message the runner reads from storage answers through a `respond` that, when
 * the save of a final reply fails with a `PersistenceError`, tries it again until it is saved:
 * after 200 ms, doubling to every 2 s, for as long as the runner lives. Before each try again it
 * asks whether the request already has a final reply (a try whose commit went through but whose
 * acknowledgement was lost, or another delivery of the message), and stops if so. A chunk of a
 * stream, and any other error, is left to `@effect/cluster` as it was. One warning when an answer
 * could not be saved, one line when it is.
 * @since 0.1.0
 */
import type { MalformedMessage, PersistenceError } from "@effect/cluster/ClusterError"
import * as Message from "@effect/cluster/Message"
import * as MessageStorage from "@effect/cluster/MessageStorage"
import type * as Reply from "@effect/cluster/Reply"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { databaseWhy } from "./databaseWhy.ts"

/**
 * When a failed save of an answer is tried again: after 200 ms, doubling to every 2 s, with no end.
 * @since 0.1.0
 * @category internals
 */
export const againEvery: Schedule.Schedule<unknown> = Schedule.exponential("200 millis").pipe(
  Schedule.union(Schedule.spaced("2 seconds"))
)

type Respond = (reply: Reply.ReplyWithContext<any>) => Effect.Effect<void, MalformedMessage | PersistenceError>

/**
 * The message's `respond`, whose save of a final reply is tried again while the database fails.
 * The log names the message: `the answer to message <id> (<tag> to <entity type> <entity id>)`.
 */
const keeping = (storage: MessageStorage.MessageStorage["Type"], message: Message.IncomingRequest<any>): Respond => (reply) => {
  const respond: Respond = message.respond
  if (reply.reply._tag !== "WithExit") return respond(reply)
  const requestId = reply.reply.requestId
  const { address, tag } = message.envelope
  const named = `the answer to message ${requestId} (${tag} to ${address.entityType} ${address.entityId})`
  const saved = storage.repliesForUnfiltered([requestId]).pipe(
    Effect.map((replies) => replies.some((r) => r._tag === "WithExit")),
    Effect.catchTag("MalformedMessage", () => Effect.succeed(false))
  )
  const again = Effect.flatMap(saved, (done) => done ? Effect.void : respond(reply)).pipe(
    Effect.retry({ while: (error) => error._tag === "PersistenceError", schedule: againEvery })
  )
  return Effect.catchTag(respond(reply), "PersistenceError", (error) =>
    Effect.logWarning(
      `${named} could not be saved (${databaseWhy(error)}): ` +
        "trying again until the database answers"
    ).pipe(
      Effect.zipRight(again),
      Effect.zipRight(Effect.logInfo(`${named} is saved`)),
      Effect.annotateLogs({ code: "cluster.answer_kept" })
    ))
}

/**
 * `storage`, whose messages read for the runner save their answers as the module says.
 * @since 0.1.0
 * @category internals
 */
export const keepAnswers = (storage: MessageStorage.MessageStorage["Type"]): MessageStorage.MessageStorage["Type"] => {
  const kept = (message: Message.Incoming<any>): Message.Incoming<any> =>
    message._tag === "IncomingRequest"
      ? new Message.IncomingRequest({
        envelope: message.envelope,
        lastSentReply: message.lastSentReply,
        respond: keeping(storage, message)
      })
      : message
  return MessageStorage.MessageStorage.of({
    ...storage,
    unprocessedMessages: (shardIds) => Effect.map(storage.unprocessedMessages(shardIds), (messages) => messages.map(kept)),
    unprocessedMessagesById: (messageIds) =>
      Effect.map(storage.unprocessedMessagesById(messageIds), (messages) => messages.map(kept))
  })
}
