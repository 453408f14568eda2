/**
 * A Turn of an endpoint hosted as a City Session (CitySessionsHost.ts): the tools its Session lists,
 * the conversation history across reloads, and tool calls as Steps.
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { CityClosed, SessionError } from "../../schema/Errors.ts"
import { EndpointError } from "../../schema/Live.ts"
import type { Session, Turn } from "../city/Session.ts"
import type { EndpointRef } from "./EndpointHost.ts"
import { callTool } from "./ToolCall.ts"
import type { Tool } from "./ToolSurface.ts"

/**
 * One entry of an endpoint's conversation history.
 * @since 0.1.0
 * @category models
 */
export interface TranscriptEntry {
  /** The Session (generation) it happened in. */
  readonly session: string
  /** The Turn's number in that Session. */
  readonly turn: number
  /** A note, a tool call, or a call's result. */
  readonly kind: "note" | "call" | "result"
  /** The entry's text. */
  readonly text: string
}

/**
 * What a Turn of a hosted endpoint can do.
 * @since 0.1.0
 * @category models
 */
export interface HostedTurn {
  /** The Turn's number in the current Session, from 1. */
  readonly number: number
  /** The tools this Session lists (its launch-read files at launch or last reload), sorted. */
  readonly tools: ReadonlyArray<string>
  /** The conversation so far, across reloads. */
  readonly history: ReadonlyArray<TranscriptEntry>
  /** Calls a listed tool in a Step of this Turn. */
  readonly call: (
    tool: string,
    input?: string
  ) => Effect.Effect<string, EndpointError | SessionError | CityClosed>
  /** Adds a note to the history (what the user or the agent said). */
  readonly note: (text: string) => Effect.Effect<void>
}

/**
 * What a hosted Turn reads from its hosting.
 * @since 0.1.0
 * @category models
 */
export interface TurnSource {
  readonly tools: ReadonlyMap<string, Tool>
  readonly transcript: Array<TranscriptEntry>
}

/**
 * The HostedTurn of `turn`: the tool set is the one the hosting has when the Turn begins.
 * @since 0.1.0
 * @category constructors
 */
export const hostedTurn = (ref: EndpointRef, h: TurnSource, session: Session, turn: Turn): HostedTurn => {
  const tools = h.tools
  const record = (kind: TranscriptEntry["kind"], text: string) =>
    Effect.sync(() => void h.transcript.push({ session: session.id, turn: turn.number, kind, text }))
  return {
    number: turn.number,
    tools: [...tools.keys()].sort(),
    get history() {
      return [...h.transcript]
    },
    note: (text) => record("note", text),
    call: (name, input = "") =>
      Effect.gen(function*() {
        const tool = tools.get(name)
        if (tool === undefined) {
          return yield* new EndpointError({ reason: "ToolNotAvailable", identity: ref.identity, tool: name, available: [...tools.keys()].sort() })
        }
        yield* record("call", `${name} ${input}`.trim())
        const result = yield* turn.step(() => callTool(ref.identity, tool, input, ref.cwd))
        yield* record("result", result.trim())
        return result
      })
  }
}
