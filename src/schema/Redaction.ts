/**
 * Secrets out of what operators read (docs/cli.md, "Redaction"): text a command produced (a
 * provisioning or endpoint command's stderr tail, a `status` command's output, a tool's failure)
 * has its secret values replaced with `[redacted]` where it is produced, before it is stored,
 * logged, printed or served (endpoint records, an owed reload's `last_error`, `lifecycle.log`,
 * `city status`, the daemon's log and `/api/status` all carry the redacted text).
 *
 * The default patterns (`defaultPatterns`), keys case-insensitive:
 * - `<key>=<value>` and `<key>: <value>` where the key is, or ends with, `password`, `passwd`,
 *   `token`, `secret`, `api_key`, `api-key` or `apikey` (`DB_PASSWORD=…`, `access_token: …`,
 *   `"client_secret": "…"`): the value, up to whitespace, a quote, `&` or `;`, becomes
 *   `[redacted]` (`password=[redacted]`);
 * - `Authorization: <scheme> <value>` (or `Authorization: <value>`): the value;
 * - `Bearer <token>` (this spelling, a token of token68 characters): the token.
 *
 * The host's own patterns (`host.json`'s `redact`, JavaScript regular expressions without flags,
 * none matching the empty text) replace their whole match with `[redacted]`. They run after the
 * defaults, on the text between the markers already there, so a marker is never matched again.
 *
 * Decisions: a false positive (`token: expired`) costs a word of an error; a missed secret costs
 * the secret, so keys match as suffixes. Redacting twice changes nothing (idempotent), and a text
 * grows by at most 9 characters per `[redacted]` it holds (the marker replaces at least one
 * character). Pure: no service, no I/O.
 * @since 0.1.0
 */

/**
 * What a secret value becomes.
 * @since 0.1.0
 * @category constants
 */
export const marker = "[redacted]"

/** A value: up to whitespace, a quote, `&` or `;`. */
const value = `[^\\s"'&;]+`

/**
 * The default patterns, documented above; each keeps its first group and redacts its last.
 * @since 0.1.0
 * @category constants
 */
export const defaultPatterns: ReadonlyArray<RegExp> = [
  new RegExp(`(authorization["']?\\s*[:=]\\s*["']?(?:[A-Za-z][A-Za-z0-9_-]*\\s+(?=[^\\s"'&;]))?)(${value})`, "gi"),
  /((?<![A-Za-z0-9_\]])Bearer\s+)([A-Za-z0-9\-._~+/]+=*)/g,
  new RegExp(`((?:password|passwd|token|secret|api[_-]?key|apikey)["']?\\s*[:=]\\s*["']?)(${value})`, "gi")
]

/**
 * Replaces secret values in a text with `[redacted]`.
 * @since 0.1.0
 * @category models
 */
export type Redact = (text: string) => string

const defaultsOnce = (text: string): string => {
  let out = text
  for (const pattern of defaultPatterns) out = out.replace(pattern, (_, kept: string) => `${kept}${marker}`)
  return out
}

/**
 * `pass` again until the text stays as it is, so that redacting twice changes nothing: a marker a
 * pass wrote can make a new value with the text beside it (`Authorization: sk-1Bearer x`, with the
 * host pattern `sk-[0-9a-z]+`, becomes `Authorization: [redacted]Bearer [redacted]`, whose value is
 * now `[redacted]Bearer`). Every change leaves fewer characters outside markers, or fewer markers,
 * so it ends; the bound only guards against a pattern that would prove that wrong.
 */
const untilStable = (pass: Redact): Redact => (text) => {
  let out = pass(text)
  for (let i = 0; i < 16; i++) {
    const next = pass(out)
    if (next === out) return out
    out = next
  }
  return out
}

const applyDefaults = untilStable(defaultsOnce)

/**
 * Redaction with the default patterns only.
 *
 * @example
 * ```ts
 * redact("login failed: password=hunter2") // "login failed: password=[redacted]"
 * ```
 * @since 0.1.0
 * @category utils
 */
export const redact: Redact = applyDefaults

/**
 * Why `source` cannot be a host pattern, or `undefined` when it can: it must compile as a
 * JavaScript regular expression and must not match the empty text.
 * @since 0.1.0
 * @category utils
 */
export const patternProblem = (source: string): string | undefined => {
  let pattern: RegExp
  try {
    pattern = new RegExp(source)
  } catch (error) {
    return `is not a regular expression: ${error instanceof Error ? error.message : String(error)}`
  }
  return pattern.test("") ? "must not match the empty text" : undefined
}

/**
 * Redaction with the default patterns, then the host's own (sources already checked with
 * `patternProblem`).
 * @since 0.1.0
 * @category constructors
 */
export const makeRedact = (sources: ReadonlyArray<string> = []): Redact => {
  if (sources.length === 0) return applyDefaults
  const patterns = sources.map((source) => new RegExp(source, "g"))
  return untilStable((text) =>
    defaultsOnce(text).split(marker).map((piece) => {
      let out = piece
      // An empty match (`\b`, a lookahead) is left alone: a marker always stands for some text.
      for (const pattern of patterns) out = out.replace(pattern, (match) => match === "" ? match : marker)
      return out
    }).join(marker))
}
