/**
 * A sweep's report as `capability register|sync|unregister` print it (docs/cli.md): the outcomes,
 * the daemon that carries out `pending` work, the exit code of the verdict. Shared by the verbs on
 * one host (`run/capability.ts`) and on a fleet (`run/cluster.ts`), where each outcome names its
 * host (a HOST column, `host` in `--json`: docs/cluster.md, "Verbs on a fleet").
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Out from "../output.ts"
import * as Live from "./owed.ts"

type SweepVerb = "capability register" | "capability sync" | "capability unregister"

/** A sweep's report printed as the verb prints it. */
export const renderSweep = <V extends SweepVerb>(
  verb: V,
  json: boolean,
  report: Out.PrintedReport,
  extra: Omit<Out.Extra<V>, "daemon">,
  headline: string
) =>
  Effect.gen(function*() {
    // Live application: whether a daemon runs to carry out `pending` work.
    const daemon = yield* Live.daemonInfo
    yield* Out.renderReport({ policy: "sweep", verb, json, report, extra: { ...extra, daemon } as Out.Extra<V>, headline })
    yield* Live.notePending(report.outcomes.filter((o) => o.application === "pending").length, json)
  })

