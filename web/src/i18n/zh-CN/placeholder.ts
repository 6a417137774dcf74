import type en from '../en/placeholder'

const messages: typeof en = {
  notFound: '此地址没有页面。',
  home: '前往运行报表',
}
export default messages
