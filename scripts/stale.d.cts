/** Types of scripts/stale.cjs (it runs before anything is compiled, so it is plain JavaScript). */
/** True when the bundle is missing, or older than `src/`, package.json or the build scripts. */
export declare const isStale: (packageRoot: string) => boolean
