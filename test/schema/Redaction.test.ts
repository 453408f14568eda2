/**
 * Redaction of a command's output (src/schema/Redaction.ts; docs/cli.md, "Redaction"): the
 * default patterns as a table, the host's own patterns and their rules in `host.json`, and two
 * properties: redacting twice changes nothing, and a text grows by at most 9 characters per marker.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import { HostConfig } from "../../src/schema/HostConfig.ts"
import { makeRedact, marker, patternProblem, redact } from "../../src/schema/Redaction.ts"
import { decodeDocument } from "../../src/services/capabilities/DocumentStore.ts"
import { InvalidFile } from "../../src/schema/FileErrors.ts"
import { anyText, holds } from "./strings.ts"

const table: ReadonlyArray<readonly [string, string]> = [
  ["login failed: password=hunter2", "login failed: password=[redacted]"],
  ["PASSWORD=hunter2 next", "PASSWORD=[redacted] next"],
  ["DB_PASSWORD=hunter2;x=1", "DB_PASSWORD=[redacted];x=1"],
  ["passwd: hunter2", "passwd: [redacted]"],
  ["url?token=abc123&page=2", "url?token=[redacted]&page=2"],
  ["access_token=abc123", "access_token=[redacted]"],
  ["client_secret = 's3cr3t' end", "client_secret = '[redacted]' end"],
  [`{"api_key":"k-123","n":1}`, `{"api_key":"[redacted]","n":1}`],
  ["apikey=k-123 api-key=k-456 API_KEY:k-789", "apikey=[redacted] api-key=[redacted] API_KEY:[redacted]"],
  ["Authorization: Bearer abc.def", "Authorization: Bearer [redacted]"],
  ["authorization: Basic dXNlcjpwYXNz", "authorization: Basic [redacted]"],
  ["Authorization: abc123", "Authorization: [redacted]"],
  ["curl: 401 with Bearer abc.def-ghi_jkl==", "curl: 401 with Bearer [redacted]"],
  ["no secrets here: exit 3", "no secrets here: exit 3"],
  ["tokens left: 5; password is wrong", "tokens left: 5; password is wrong"]
]

describe("redact (the default patterns)", () => {
  it.effect("replaces the value of each usual form with [redacted] and keeps the rest", () =>
    Effect.sync(() => {
      for (const [input, expected] of table) expect(redact(input), input).toBe(expected)
    }))

  it.effect("redacting twice changes nothing (defaults, and with the host's patterns)", () =>
    Effect.sync(() => {
      const secretish = FastCheck.oneof(
        anyText,
        FastCheck.array(
          FastCheck.oneof(
            anyText,
            FastCheck.constantFrom(
              "password=", "Token: ", "secret=\"", "Authorization: ", "Bearer ", "api_key:", "[redacted]", " ", "&",
              "hunter2", "abc.def", "Basic ", "=", ":", "'", "\n", "sk-1"
            )
          ),
          { maxLength: 12 }
        ).map((parts) => parts.join(""))
      )
      const withHost = makeRedact(["sk-[0-9a-z]+", "hunter\\d"])
      // Found by this property: the host's marker made `[redacted]Bearer` a new Authorization value.
      const found = "Authorization: sk-1Bearer password="
      expect(withHost(found)).toBe("Authorization: [redacted] [redacted]")
      expect(withHost(withHost(found))).toBe(withHost(found))
      holds([secretish], (text) => {
        expect(redact(redact(text))).toBe(redact(text))
        expect(withHost(withHost(text))).toBe(withHost(text))
      })
    }))

  it.effect("a text grows by at most 9 characters per [redacted] it holds", () =>
    Effect.sync(() => {
      const withHost = makeRedact(["\\b", "x*y", "sk-[0-9a-z]+"])
      const markers = (s: string) => s.split(marker).length - 1
      holds([FastCheck.array(FastCheck.constantFrom("token=a", "Bearer b", "xy", "sk-1", " ", "Authorization: c d", "z"), { maxLength: 20 }).map((p) => p.join(""))], (text) => {
        for (const out of [redact(text), withHost(text)]) {
          expect(out.length).toBeLessThanOrEqual(text.length + 9 * markers(out))
        }
      })
    }))
})

describe("host.json's redact patterns", () => {
  it.effect("replace their whole match, after the defaults; an empty match is left alone", () =>
    Effect.sync(() => {
      const r = makeRedact(["sk-[A-Za-z0-9]{6,}", "\\b"])
      expect(r("key sk-abcdef123 and password=x")).toBe("key [redacted] and password=[redacted]")
    }))

  it.effect("a pattern that does not compile or matches the empty text is refused, naming host.json, the field and its index", () =>
    Effect.gen(function*() {
      expect(patternProblem("(")).toMatch(/^is not a regular expression: /)
      expect(patternProblem("a*")).toBe("must not match the empty text")
      expect(patternProblem("sk-\\w+")).toBeUndefined()
      const parse = decodeDocument(HostConfig, (file, faults) => new InvalidFile({ reason: "HostConfig", file, ...faults }))
      const host = (redact: unknown) =>
        JSON.stringify({ schema: 1, agent_runtimes: [], channel_runtimes: [], profiles: {}, redact })
      const bad = yield* Effect.flip(parse("/root/host.json", host(["sk-\\w+", "("])))
      expect(bad.message).toMatch(/^invalid host configuration \/root\/host\.json: field "redact\[1\]": is not a regular expression: /)
      expect(bad.message).not.toContain("\n")
      const empty = yield* Effect.flip(parse("/root/host.json", host(["x?"])))
      expect(empty.message).toBe(`invalid host configuration /root/host.json: field "redact[0]": must not match the empty text`)
      const good = yield* parse("/root/host.json", host(["sk-\\w+"]))
      expect(good.redact).toEqual(["sk-\\w+"])
      expect(Schema.is(HostConfig)(good)).toBe(true)
    }))
})
