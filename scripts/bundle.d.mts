/** Types of scripts/bundle.mjs (it runs before anything is compiled, so it is plain JavaScript). */
export declare const packageRoot: string
export declare const bundlePath: string
export declare const pluginBundlePath: string
export declare const workerBundlePath: string
export declare const isStale: () => boolean
export declare const build: () => Promise<void>
export declare const ensureBundle: () => Promise<boolean>
