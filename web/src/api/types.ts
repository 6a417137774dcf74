// Names for the API's objects, all taken from the generated schema.
import type { Schemas } from './client'

export type User = Schemas['User']
export type Group = Schemas['Group']
export type GroupCreate = Schemas['GroupCreate']
export type GroupUpdate = Schemas['GroupUpdate']
export type Job = Schemas['Job']
export type JobCreate = Schemas['JobCreate']
export type JobUpdate = Schemas['JobUpdate']
export type JobLog = Schemas['JobLog']
export type ScheduleType = Schemas['ScheduleType']
export type MisfireStrategy = Schemas['MisfireStrategy']
export type RouteStrategy = Schemas['RouteStrategy']
export type BlockStrategy = Schemas['BlockStrategy']
export type GlueType = Schemas['GlueType']
export type ApiToken = Schemas['ApiToken']
export type AuditEntry = Schemas['AuditEntry']
export type ScriptVersion = Schemas['ScriptVersion']

export const SCHEDULE_TYPES: ScheduleType[] = ['CRON', 'FIX_RATE', 'FIX_DELAY', 'NONE']
export const MISFIRE_STRATEGIES: MisfireStrategy[] = ['DO_NOTHING', 'FIRE_ONCE_NOW']
export const ROUTE_STRATEGIES: RouteStrategy[] = [
  'FIRST',
  'LAST',
  'ROUND',
  'RANDOM',
  'CONSISTENT_HASH',
  'LEAST_FREQUENTLY_USED',
  'LEAST_RECENTLY_USED',
  'FAILOVER',
  'BUSYOVER',
  'SHARDING_BROADCAST',
]
export const BLOCK_STRATEGIES: BlockStrategy[] = ['SERIAL_EXECUTION', 'DISCARD_LATER', 'COVER_EARLY']
export const GLUE_TYPES: GlueType[] = ['BEAN', 'GLUE_SHELL', 'GLUE_PYTHON', 'GLUE_NODEJS', 'GLUE_PHP', 'GLUE_POWERSHELL', 'GLUE_GROOVY']

/** A group's registered executor (GET groups/{id}/executors). */
export type ExecutorRegistration = Schemas['ExecutorRegistration']
export type NodeStatus = Schemas['NodeStatus']
export type NodeList = Schemas['NodeList']
export type Dashboard = Schemas['Dashboard']
export type FailedRun = Schemas['FailedRun']
export type AlarmChannel = Schemas['AlarmChannel']
export type AlarmChannelWithSecret = Schemas['AlarmChannelWithSecret']
export type AlarmChannelInput = Schemas['AlarmChannelInput']
export type AlarmChannelUpdate = Schemas['AlarmChannelUpdate']
export type AlarmChannelKind = NonNullable<AlarmChannel['kind']>
export const ALARM_CHANNEL_KINDS: AlarmChannelKind[] = ['email', 'webhook']
