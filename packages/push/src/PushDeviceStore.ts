/** The notification kinds a phone can switch on or off (service-spec.md, Events). */
export type PushKind = 'listChanges' | 'householdNews' | 'runDone' | 'reminders';
export const PUSH_KINDS: readonly PushKind[] = ['listChanges', 'householdNews', 'runDone', 'reminders'];

export type PushPlatform = 'ios' | 'android';
export const PLATFORMS: readonly PushPlatform[] = ['ios', 'android'];

/** A registered phone: PushDeviceResponse of the spec, and what a sender needs. */
export interface PushDevice {
  token: string;
  platform: PushPlatform;
  provider: string;
  listChanges: boolean;
  householdNews: boolean;
  runDone: boolean;
  reminders: boolean;
  /** ISO 8601 UTC with milliseconds: the latest PUT of this token. */
  lastSeenAt: string;
}

export interface RegisterDevice {
  token: string;
  platform: PushPlatform;
  /** Already defaulted: never null here. */
  provider: string;
}

export interface DeviceSwitches {
  listChanges: boolean;
  householdNews: boolean;
  runDone: boolean;
  /** null or undefined: keep the current value. */
  reminders?: boolean | null;
}

/** What the router (and a sender) needs from storage. Every lookup is the caller's own. */
export interface PushDeviceStore {
  /** Upsert by token: new → all switches on; known → marked seen and handed to `userId`. */
  register(userId: string, device: RegisterDevice): Promise<PushDevice>;
  get(userId: string, token: string): Promise<PushDevice | undefined>;
  setSwitches(userId: string, token: string, switches: DeviceSwitches): Promise<PushDevice | undefined>;
  /** Hard delete; false when the token is not the caller's. */
  remove(userId: string, token: string): Promise<boolean>;
  /** The account's devices with `kind` switched on, most recently seen first. */
  devicesFor(userId: string, kind: PushKind): Promise<PushDevice[]>;
}
