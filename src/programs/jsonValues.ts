/**
 * The `--json` fields of the values the verbs print: from the services' values to the glossary's
 * words (a peer, a declaration, an outcome, an invalid file, an endpoint). Their shapes are the
 * Schemas of `jsonOutput.ts`, which the JSON-output test decodes every document with; this module
 * holds only the functions, so a verb does not build every verb's Schema to print its own.
 * @since 0.1.0
 */
import type { Declaration } from "../schema/Declaration.ts"
import type { InvalidFile } from "../schema/FileErrors.ts"
import { type EndpointOutcome, identityOf } from "../schema/Outcome.ts"
import type { Peer } from "../schema/Peer.ts"
import type * as Json from "./jsonOutput.ts"

export const invalidJson = (invalid: ReadonlyArray<InvalidFile>): Array<typeof Json.Invalid.Type> =>
  invalid.map((e) => ({
    kind: e.name,
    file: e.file,
    field: e.field,
    rule: e.rule,
    faults: e.faults,
    more_faults: e.moreFaults,
    message: e.message
  }))

/** An outcome in the glossary's words; a sweep's on a fleet carries its `host` first. */
export const outcomeJson = (o: EndpointOutcome & { readonly host?: string }): typeof Json.Outcome.Type => {
  const { host, personality, ...rest } = o
  return { ...(host === undefined ? {} : { host }), ...rest, peer: personality }
}

export const capabilityJson = (d: Declaration): typeof Json.Capability.Type => ({
  capability: d.capability,
  version: d.version ?? null,
  package: d.package ?? null,
  runtimes: d.runtimes
})

export const peerJson = (p: Peer): typeof Json.PeerJson.Type => ({
  peer: p.personality,
  cwd: p.cwd,
  runtimes: p.runtimes,
  default_runtime: p.default_runtime
})

/** The endpoint's `<runtime>-<personality>` with its two parts. */
export const endpointJson = (runtime: string, personality: string) => ({
  endpoint: identityOf(runtime, personality),
  peer: personality,
  runtime
})
