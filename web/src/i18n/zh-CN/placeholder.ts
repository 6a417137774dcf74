import type en from '../en/placeholder'

const messages: typeof en = {
  title: '即将推出',
  body: '此页面正在建设中，其 API 已在 /api/v1 下提供。',
  notFound: '此地址没有页面。',
  home: '前往运行报表',
}
export default messages
