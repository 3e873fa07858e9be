import { getMany } from '#lib/db/batch';
import { counterKey, nextId } from '#lib/db/counters';
import { pad, type TableKey } from '#lib/db/keys';
import { type Page, type PageRequest, queryPage } from '#lib/db/paging';
import { table } from '#lib/db/table';
import { claimUnique, itemExists, itemIsNew, releaseUnique, type TransactItem, uniqueKey } from '#lib/db/transactions';
import { ConflictError } from '#lib/errors';

const ALL_USERS = 'USERS';
const EMAIL_SCOPE = 'email';
const USERNAME_SCOPE = 'username';

/**
 * Users as stored. A user belongs to the instance, not to a tenant; ids come from one global counter.
 *
 * | record | pk | sk | indexes |
 * |---|---|---|---|
 * | user | `USER#<id>` | `USER` | gsi1: `USERS` / `USER#<pad id>` (every user, by id) |
 * | email guard | `UNIQUE#email#<email lowercased>` | `UNIQUE` | `owner`: the user id (how login finds a user) |
 * | username guard | `UNIQUE#username#<username lowercased>` | `UNIQUE` | `owner`: the user id |
 * | id counter | `COUNTER` | `COUNTER#users` | |
 *
 * Reasons a user write is refused with: `email-taken`, `username-taken`, `user-missing` (the record is
 * gone: erased meanwhile) and `user-exists` (a new record's id is in use).
 */
export const userKeys = {
  byId: (userId: number): TableKey => ({ pk: `USER#${userId}`, sk: 'USER' }),
  allUsersIndex: (userId: number) => ({ gsi1pk: ALL_USERS, gsi1sk: `USER#${pad(userId)}` }),
  emailGuard: (email: string): TableKey => uniqueKey(EMAIL_SCOPE, email),
  counter: counterKey('users'),
};

/** A user as stored. `password_hash` and `token_version` never leave the identity area. */
export interface UserItem {
  pk: string;
  sk: string;
  gsi1pk: string;
  gsi1sk: string;
  id: number;
  username: string;
  email: string;
  role: string;
  avatar_url: string | null;
  password_hash: string;
  /** Raised by "log out everywhere" and password resets: tokens carrying an older version are dead. */
  token_version: number;
  personal_org_id: string;
  created_at: string;
  updated_at: string;
}

/** The user record of the API: the stored item without its keys and secrets. */
export type User = Omit<
  UserItem,
  'pk' | 'sk' | 'gsi1pk' | 'gsi1sk' | 'password_hash' | 'token_version' | 'personal_org_id'
>;

export const toUser = (item: UserItem): User => ({
  id: item.id,
  username: item.username,
  email: item.email,
  role: item.role,
  avatar_url: item.avatar_url ?? null,
  created_at: item.created_at,
  updated_at: item.updated_at,
});

/** What a refused user write answers, in every transaction that creates or renames a user. */
export const userConflicts = {
  'email-taken': () =>
    new ConflictError('A user with this email already exists', [{ path: 'email', message: 'is taken' }]),
  'username-taken': () =>
    new ConflictError('A user with this username already exists', [{ path: 'username', message: 'is taken' }]),
};

/** Every access and refresh token issued before this write stops working. */
const endSessions = 'ADD token_version :one';

export const nextUserId = (): Promise<number> => nextId(userKeys.counter);

export async function getUserItem(userId: number): Promise<UserItem | undefined> {
  const result = await table.get({ Key: userKeys.byId(userId) });
  return result.Item as UserItem | undefined;
}

/** The users with these ids, in that order, leaving out ids with no user. */
export async function getUsersByIds(ids: number[]): Promise<UserItem[]> {
  const users = await getMany<UserItem>(ids.map((id) => userKeys.byId(id)));
  return users.filter((user): user is UserItem => user !== undefined);
}

/** The user id registered under an email address (the email guard names its owner). */
export async function userIdByEmail(email: string): Promise<number | undefined> {
  const result = await table.get({ Key: userKeys.emailGuard(email) });
  return result.Item ? Number(result.Item.owner) : undefined;
}

/** Every user of the instance, by id. */
export async function listAllUsers({ limit, offset }: PageRequest): Promise<Page<UserItem>> {
  return queryPage<UserItem>(
    {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': ALL_USERS },
    },
    { limit, offset },
  );
}

/** The writes that create a user: its email and username guards, then the record. */
export function newUserWrites(user: UserItem): TransactItem[] {
  return [
    claimUnique(EMAIL_SCOPE, user.email, String(user.id), 'email-taken'),
    claimUnique(USERNAME_SCOPE, user.username, String(user.id), 'username-taken'),
    { Put: { Item: user, ConditionExpression: itemIsNew }, reason: 'user-exists' },
  ];
}

export interface UserChanges {
  username?: string;
  email?: string;
  role?: string;
}

/**
 * The writes that change a user: a new email or username (other than by case) moves its guard, claimed
 * and released in the same transaction as the record, so two users can never end up sharing one.
 */
export function userChangeWrites(
  user: UserItem,
  changes: UserChanges,
  now: string,
): { next: UserItem; writes: TransactItem[] } {
  const next = { ...user, ...changes, updated_at: now };
  const writes: TransactItem[] = [];
  if (changes.email && changes.email.toLowerCase() !== user.email.toLowerCase()) {
    writes.push(
      claimUnique(EMAIL_SCOPE, changes.email, String(user.id), 'email-taken'),
      releaseUnique(EMAIL_SCOPE, user.email),
    );
  }
  if (changes.username && changes.username.toLowerCase() !== user.username.toLowerCase()) {
    writes.push(
      claimUnique(USERNAME_SCOPE, changes.username, String(user.id), 'username-taken'),
      releaseUnique(USERNAME_SCOPE, user.username),
    );
  }
  writes.push({
    Update: {
      Key: userKeys.byId(user.id),
      UpdateExpression: 'SET username = :username, email = :email, #role = :role, updated_at = :now',
      ConditionExpression: itemExists,
      ExpressionAttributeNames: { '#role': 'role' },
      ExpressionAttributeValues: {
        ':username': next.username,
        ':email': next.email,
        ':role': next.role,
        ':now': now,
      },
    },
    reason: 'user-missing',
  });
  return { next, writes };
}

/** The writes that erase the record and free the email and username it held. */
export const userErasureWrites = (user: UserItem): TransactItem[] => [
  { Delete: { Key: userKeys.byId(user.id) } },
  releaseUnique(EMAIL_SCOPE, user.email),
  releaseUnique(USERNAME_SCOPE, user.username),
];

/** For another record's transaction: the user must still exist (`user-missing`). */
export const userExistsCheck = (userId: number): TransactItem => ({
  ConditionCheck: { Key: userKeys.byId(userId), ConditionExpression: itemExists },
  reason: 'user-missing',
});

/** Invalidates every access and refresh token of the user ("log out everywhere"). */
export async function bumpTokenVersion(userId: number): Promise<void> {
  await table.update({
    Key: userKeys.byId(userId),
    UpdateExpression: endSessions,
    ConditionExpression: itemExists,
    ExpressionAttributeValues: { ':one': 1 },
    reason: 'user-missing',
  });
}

/**
 * Replaces a hash made with weaker parameters by one of the same password, keeping every session; only
 * while the stored hash is still the one that was verified (`hash-changed` otherwise: a reset won).
 */
export async function upgradePasswordHash(input: { userId: number; from: string; to: string }): Promise<void> {
  await table.update({
    Key: userKeys.byId(input.userId),
    UpdateExpression: 'SET password_hash = :to',
    ConditionExpression: 'password_hash = :from',
    ExpressionAttributeValues: { ':from': input.from, ':to': input.to },
    reason: 'hash-changed',
  });
}

/** Sets a new password and ends every session; refused with `user-missing` when the account is gone. */
export async function setPassword(input: { userId: number; passwordHash: string; now: string }): Promise<void> {
  await table.update({
    Key: userKeys.byId(input.userId),
    UpdateExpression: `SET password_hash = :hash, updated_at = :now ${endSessions}`,
    ConditionExpression: itemExists,
    ExpressionAttributeValues: { ':hash': input.passwordHash, ':now': input.now, ':one': 1 },
    reason: 'user-missing',
  });
}
