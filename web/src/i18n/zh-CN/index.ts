// One module per page or shared piece; src/i18n/index.ts merges the languages.
import common from './common'
import login from './login'
import placeholder from './placeholder'
import shell from './shell'

export default {
  common,
  shell,
  login,
  placeholder,
}
