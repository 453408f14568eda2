/**
 * Options shared by the `city` verbs: `--root` and `--json` on every verb;
 * `--timeout-ms` and `--concurrency` on every verb that runs provisioning
 * commands.
 * @since 0.1.0
 */
import * as Options from "@effect/cli/Options"
import * as Option from "effect/Option"
import * as CapabilitiesLive from "../layers/CapabilitiesLive.ts"
import { homedir } from "node:os"
import { join } from "node:path"

// Text, not `Options.directory`: the parser's own check of the path failed with a raw
// platform error (a stack trace on stdout) on an inaccessible root; the state root reports it.
export const root = Options.text("root").pipe(
  Options.withDescription("The state root (default: $CITY_ROOT, else ~/.city)"),
  Options.optional
)

export const json = Options.boolean("json").pipe(Options.withDescription("Print JSON for scripts"))

export const timeoutMs = Options.integer("timeout-ms").pipe(
  Options.withDescription("Timeout per provisioning call, in milliseconds"),
  Options.withDefault(120_000)
)

export const concurrency = Options.integer("concurrency").pipe(
  Options.withDescription("Provisioning calls run at once"),
  Options.withDefault(4)
)

/** `--root`, else `$CITY_ROOT`, else `~/.city`. */
export const resolveRoot = (flag: Option.Option<string>): string =>
  Option.getOrElse(flag, () => {
    const fromEnv = process.env["CITY_ROOT"]
    return fromEnv !== undefined && fromEnv !== "" ? fromEnv : join(homedir(), ".city")
  })

/** The options of every verb that runs provisioning commands. */
export const commandOptions = { root, json, timeoutMs, concurrency }

/** The capability services on the state root the operator chose. */
export const live = (flag: Option.Option<string>) => CapabilitiesLive.layer({ root: resolveRoot(flag) })
