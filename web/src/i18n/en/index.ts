// One module per page or shared piece; src/i18n/index.ts merges the languages.
import common from './common'
import dashboard from './dashboard'
import groups from './groups'
import jobs from './jobs'
import login from './login'
import placeholder from './placeholder'
import runs from './runs'
import schedule from './schedule'
import script from './script'
import shell from './shell'
import tokens from './tokens'
import users from './users'
import audit from './audit'
import alarms from './alarms'
import cluster from './cluster'
import workflows from './workflows'
import calendars from './calendars'
import backfills from './backfills'

export default {
  common,
  shell,
  login,
  placeholder,
  groups,
  jobs,
  schedule,
  runs,
  script,
  users,
  tokens,
  audit,
  alarms,
  cluster,
  dashboard,
  workflows,
  calendars,
  backfills,
}
