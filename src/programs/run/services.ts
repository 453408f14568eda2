/**
 * The services a verb runs on: the capability and live-application services on the state root
 * the operator chose (`--root`, else `$CITY_ROOT`, else `~/.city`).
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as LiveApplication from "../../layers/LiveApplication.ts"
import { Invocation } from "../invocation.ts"
import { resolveRoot } from "../options.ts"

/** The capability and live-application services on the state root the operator chose. */
export const live = (flag: Option.Option<string>) =>
  Layer.unwrapEffect(Effect.map(Invocation, (i) =>
    LiveApplication.layer({
      root: resolveRoot(flag, i),
      // On a terminal, a wait for the root lock says who holds it (docs/cli.md, "State root").
      ...(i.stderrIsTTY ? { lockNotice: (text: string) => i.writeStderr(`city: ${text}\n`) } : {})
    })))
