"""Setting names systemd 252 knows per section of a .service unit (load-fragment-gperf.gperf.in).

Generated from systemd-stable 252.39; used only to warn like systemd does about unknown keys.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


UNIT_KEYS = _words(
    """
    After AllowIsolate AssertACPower AssertArchitecture AssertCPUFeature AssertCPUPressure
    AssertCPUs AssertCapability AssertControlGroupController AssertCredential
    AssertDirectoryNotEmpty AssertEnvironment AssertFileIsExecutable AssertFileNotEmpty
    AssertFirstBoot AssertGroup AssertHost AssertIOPressure AssertKernelCommandLine
    AssertKernelVersion AssertMemory AssertMemoryPressure AssertNeedsUpdate AssertOSRelease
    AssertPathExists AssertPathExistsGlob AssertPathIsDirectory AssertPathIsEncrypted
    AssertPathIsMountPoint AssertPathIsReadWrite AssertPathIsSymbolicLink AssertSecurity
    AssertUser AssertVirtualization Before BindTo BindsTo CollectMode ConditionACPower
    ConditionArchitecture ConditionCPUFeature ConditionCPUPressure ConditionCPUs
    ConditionCapability ConditionControlGroupController ConditionCredential
    ConditionDirectoryNotEmpty ConditionEnvironment ConditionFileIsExecutable
    ConditionFileNotEmpty ConditionFirmware ConditionFirstBoot ConditionGroup ConditionHost
    ConditionIOPressure ConditionKernelCommandLine ConditionKernelVersion ConditionMemory
    ConditionMemoryPressure ConditionNeedsUpdate ConditionOSRelease ConditionPathExists
    ConditionPathExistsGlob ConditionPathIsDirectory ConditionPathIsEncrypted
    ConditionPathIsMountPoint ConditionPathIsReadWrite ConditionPathIsSymbolicLink
    ConditionSecurity ConditionUser ConditionVirtualization Conflicts DefaultDependencies
    Description Documentation FailureAction FailureActionExitStatus IgnoreOnIsolate
    IgnoreOnSnapshot JobRunningTimeoutSec JobTimeoutAction JobTimeoutRebootArgument
    JobTimeoutSec JoinsNamespaceOf OnFailure OnFailureIsolate OnFailureJobMode OnSuccess
    OnSuccessJobMode PartOf PropagateReloadFrom PropagateReloadTo PropagatesReloadTo
    PropagatesStopTo RebootArgument RefuseManualStart RefuseManualStop ReloadPropagatedFrom
    Requires RequiresMountsFor RequiresOverridable Requisite RequisiteOverridable SourcePath
    StartLimitAction StartLimitBurst StartLimitInterval StartLimitIntervalSec StopPropagatedFrom
    StopWhenUnneeded SuccessAction SuccessActionExitStatus Upholds Wants
    """
)

SERVICE_KEYS = _words(
    """
    AllowedCPUs AllowedMemoryNodes AmbientCapabilities AppArmorProfile BPFProgram BindPaths
    BindReadOnlyPaths BlockIOAccounting BlockIODeviceWeight BlockIOReadBandwidth BlockIOWeight
    BlockIOWriteBandwidth BusName BusPolicy CPUAccounting CPUAffinity CPUQuota CPUQuotaPeriodSec
    CPUSchedulingPolicy CPUSchedulingPriority CPUSchedulingResetOnFork CPUShares CPUWeight
    CacheDirectory CacheDirectoryMode Capabilities CapabilityBoundingSet ConfigurationDirectory
    ConfigurationDirectoryMode CoredumpFilter DefaultMemoryLow DefaultMemoryMin Delegate
    DeviceAllow DevicePolicy DisableControllers DynamicUser Environment EnvironmentFile
    ExecCondition ExecPaths ExecReload ExecSearchPath ExecStart ExecStartPost ExecStartPre
    ExecStop ExecStopPost ExitType ExtensionDirectories ExtensionImages FailureAction
    FileDescriptorStoreMax FinalKillSignal Group GuessMainPID IOAccounting
    IODeviceLatencyTargetSec IODeviceWeight IOReadBandwidthMax IOReadIOPSMax IOSchedulingClass
    IOSchedulingPriority IOWeight IOWriteBandwidthMax IOWriteIOPSMax IPAccounting IPAddressAllow
    IPAddressDeny IPCNamespacePath IPEgressFilterPath IPIngressFilterPath IgnoreSIGPIPE
    InaccessibleDirectories InaccessiblePaths KeyringMode KillMode KillSignal LimitAS LimitCORE
    LimitCPU LimitDATA LimitFSIZE LimitLOCKS LimitMEMLOCK LimitMSGQUEUE LimitNICE LimitNOFILE
    LimitNPROC LimitRSS LimitRTPRIO LimitRTTIME LimitSIGPENDING LimitSTACK LoadCredential
    LoadCredentialEncrypted LockPersonality LogExtraFields LogLevelMax LogNamespace
    LogRateLimitBurst LogRateLimitIntervalSec LogsDirectory LogsDirectoryMode
    ManagedOOMMemoryPressure ManagedOOMMemoryPressureLimit ManagedOOMPreference ManagedOOMSwap
    MemoryAccounting MemoryDenyWriteExecute MemoryHigh MemoryLimit MemoryLow MemoryMax MemoryMin
    MemorySwapMax MountAPIVFS MountFlags MountImages NUMAMask NUMAPolicy NetClass
    NetworkNamespacePath Nice NoExecPaths NoNewPrivileges NonBlocking NotifyAccess OOMPolicy
    OOMScoreAdjust PAMName PIDFile PassEnvironment PermissionsStartOnly Personality
    PrivateDevices PrivateIPC PrivateMounts PrivateNetwork PrivateTmp PrivateUsers ProcSubset
    ProtectClock ProtectControlGroups ProtectHome ProtectHostname ProtectKernelLogs
    ProtectKernelModules ProtectKernelTunables ProtectProc ProtectSystem ReadOnlyDirectories
    ReadOnlyPaths ReadWriteDirectories ReadWritePaths RebootArgument RemainAfterExit RemoveIPC
    Restart RestartForceExitStatus RestartKillSignal RestartPreventExitStatus RestartSec
    RestrictAddressFamilies RestrictFileSystems RestrictNamespaces RestrictNetworkInterfaces
    RestrictRealtime RestrictSUIDSGID RootDirectory RootDirectoryStartOnly RootHash
    RootHashSignature RootImage RootImageOptions RootVerity RuntimeDirectory
    RuntimeDirectoryMode RuntimeDirectoryPreserve RuntimeMaxSec RuntimeRandomizedExtraSec
    SELinuxContext SecureBits SendSIGHUP SendSIGKILL SetCredential SetCredentialEncrypted Slice
    SmackProcessLabel SocketBindAllow SocketBindDeny Sockets StandardError StandardInput
    StandardInputData StandardInputText StandardOutput StartLimitAction StartLimitBurst
    StartLimitInterval StartupAllowedCPUs StartupAllowedMemoryNodes StartupBlockIOWeight
    StartupCPUShares StartupCPUWeight StartupIOWeight StateDirectory StateDirectoryMode
    SuccessExitStatus SupplementaryGroups SysVStartPriority SyslogFacility SyslogIdentifier
    SyslogLevel SyslogLevelPrefix SystemCallArchitectures SystemCallErrorNumber SystemCallFilter
    SystemCallLog TTYColumns TTYPath TTYReset TTYRows TTYVHangup TTYVTDisallocate
    TasksAccounting TasksMax TemporaryFileSystem TimeoutAbortSec TimeoutCleanSec TimeoutSec
    TimeoutStartFailureMode TimeoutStartSec TimeoutStopFailureMode TimeoutStopSec TimerSlackNSec
    Type UMask USBFunctionDescriptors USBFunctionStrings UnsetEnvironment User UtmpIdentifier
    UtmpMode WatchdogSec WatchdogSignal WorkingDirectory
    """
)

INSTALL_KEYS = _words(
    """
    Alias Also DefaultInstance RequiredBy WantedBy
    """
)

KNOWN_KEYS: dict[str, frozenset[str]] = {
    "Unit": UNIT_KEYS,
    "Service": SERVICE_KEYS,
    "Install": INSTALL_KEYS,
}
