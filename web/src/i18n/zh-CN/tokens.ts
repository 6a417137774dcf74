import type en from '../en/tokens'

const messages: typeof en = {
  title: 'API 令牌',
  intro: '令牌让脚本以你的身份调用 API：放在请求头 {header} 中发送。它拥有与你相同的权限。',
  create: '新建令牌',
  createTitle: '新建 API 令牌',
  columns: {
    name: '名称',
    status: '状态',
    createdAt: '创建时间',
    lastUsedAt: '最后使用',
    expiresAt: '过期时间',
  },
  fields: {
    name: '名称',
    nameHelp: '令牌的用途，例如“部署流水线”',
    expires: '过期',
    never: '永不过期',
    after: '若干天后',
    days: '天数（1 到 365）',
  },
  status: {
    active: '有效',
    expired: '已过期',
    revoked: '已吊销',
  },
  secretTitle: '你的新令牌',
  secretOnce: '请立即复制：它只显示这一次，之后无法再读取。',
  secretLabel: '令牌 {name} 的密钥',
  copy: '复制',
  copied: '已复制到剪贴板',
  copyFailed: '无法复制：请选中文本自行复制',
  done: '我已复制',
  revoke: '吊销',
  revokeLabel: '吊销令牌 {name}',
  revokeTitle: '吊销令牌？',
  revokeConfirm: '吊销令牌“{name}”？使用它的程序将立即无法访问。',
  revoked: '令牌 {name} 已吊销。',
}

export default messages
