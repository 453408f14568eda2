/** Types of scripts/stale.cjs (it runs before anything is compiled, so it is plain JavaScript). */
/** What scripts/bundle.mjs writes, relative to the package root; the binary's bundle last. */
export declare const outputs: ReadonlyArray<string>
/** True when an output is missing, or the bundle is older than `src/`, package.json or the build scripts. */
export declare const isStale: (packageRoot: string) => boolean
