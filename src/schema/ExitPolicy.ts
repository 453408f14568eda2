/**
 * The CLI's exit policy (docs/cli.md, "Exit codes"): every error that can reach the command line,
 * by tag, is refused input (the operator can fix the command line or the file: exit 2) or not (the
 * state root, the machine or the City failed us: exit 1). The table is keyed by tag, so an error
 * whose tag is not listed cannot be given to `exitCodeOf`: a new error that reaches the CLI
 * without saying which it is does not compile.
 * @since 0.1.0
 */

/**
 * `true` for refused input (exit 2), `false` otherwise (exit 1), by error tag; a family of errors
 * (a tag with a `reason`: docs/cli.md, "Error tags and the library's error families") by reason,
 * every reason of it listed.
 * @since 0.1.0
 * @category constants
 */
export const refusedByTag = {
  InvalidFile: true,
  CapabilityError: {
    InvalidName: true,
    InvalidJointSettings: true,
    InvalidCwd: true,
    UnknownCapability: true,
    UnknownPeer: true,
    UnknownRuntime: true,
    PeerAlreadyExists: true,
    RuntimeNotWired: true,
    DefaultRuntimeRemoval: true
  },
  StateRootError: {
    RootNotFound: true,
    StateError: false,
    RootLockBusy: false,
    EndpointBusy: false
  },
  UsageError: true,
  ActionRejected: {
    PluginNotFound: true,
    ActionNotFound: true,
    ActionInputRejected: true,
    PluginNotReady: false,
    ActionFailed: false,
    ResultNotJson: false,
    // A reference's output check: not a call by name, so never `city plugins call`'s.
    ActionOutputRejected: false
  },
  CityClosed: false,
  DaemonError: {
    DaemonAlreadyRunning: false,
    StatusListenFailed: false,
    NoStatusPage: false,
    ControlChannelUnreachable: false,
    ControlChannelFailed: false
  },
  ClusterError: {
    ClusterUnavailable: false,
    // A fleet call's: an outcome of the sweep, never a verb's failure.
    HostUnavailable: false
  },
  // Only PluginRootUnreadable fails a verb; the others are a skipped folder's, reported, not raised.
  PluginLoadError: {
    PluginRootUnreadable: false,
    ManifestInvalid: false,
    NotLicensed: false,
    EntryNotFound: false,
    PromptRejected: false,
    EntryImportFailed: false,
    EntryShapeInvalid: false,
    RegistrationFailed: false,
    PluginConfigInvalid: false
  }
} as const

type Policy = typeof refusedByTag

/**
 * The tag of an error the exit policy classifies.
 * @since 0.1.0
 * @category models
 */
export type ClassifiedTag = keyof Policy

/**
 * An error the exit policy classifies: its tag, and for a family its reason.
 * @since 0.1.0
 * @category models
 */
export type Classified = {
  readonly [K in ClassifiedTag]: Policy[K] extends boolean ? { readonly _tag: K }
    : { readonly _tag: K; readonly reason: keyof Policy[K] }
}[ClassifiedTag]

/**
 * Is this failure refused input?
 * @since 0.1.0
 * @category guards
 */
export const refused = (error: Classified): boolean => {
  const entry: boolean | Readonly<Record<string, boolean>> = refusedByTag[error._tag]
  return typeof entry === "boolean" ? entry : "reason" in error && entry[error.reason] === true
}

/**
 * The CLI exit code of a failure: 2 for refused input, 1 otherwise.
 * @since 0.1.0
 * @category utils
 */
export const exitCodeOf = (error: Classified): 1 | 2 => refused(error) ? 2 : 1
