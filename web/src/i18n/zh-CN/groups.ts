import type en from '../en/groups'

const messages: typeof en = {
  title: '执行器管理',
  newTitle: '新建执行器分组',
  editTitle: '执行器分组',
  create: '新建分组',
  searchLabel: '搜索分组',
  searchPlaceholder: 'AppName 或名称',
  appName: 'AppName',
  appNameHelp: '执行器注册时使用的名称（--app-name），创建后不可修改。',
  titleField: '名称',
  addressType: '注册方式',
  addressTypes: {
    '0': '自动注册（已注册的执行器）',
    '1': '手动录入',
  },
  addressTypeShort: {
    '0': '自动注册',
    '1': '手动录入',
  },
  addressList: '执行器地址',
  addressListHelp: '每行一个 http(s) 地址，例如 http://10.0.0.5:9999/',
  addresses: '在线地址',
  noAddresses: '没有在线的执行器',
  accessToken: '访问令牌',
  accessTokenHelp: '该分组执行器使用的 XXL-JOB-ACCESS-TOKEN。留空则使用调度中心自己的令牌。',
  accessTokenKeep: '已设置。留空则保持不变；输入新值则替换。',
  accessTokenNone: '未设置：该分组的执行器使用调度中心的令牌。',
  accessTokenState: '独立访问令牌',
  executors: {
    title: '已注册的执行器',
    address: '地址',
    updateTime: '最近注册时间',
    none: '最近 90 秒内没有执行器注册。',
    unavailable: '此调度中心暂不提供注册信息。',
  },
  created: '创建时间',
  updated: '最后修改',
  deleteConfirm: '删除执行器分组“{name}”？此操作无法撤销。',
  deleteRefused: '无法删除：{message}',
  readOnly: '只有管理员可以修改执行器分组。',
}
export default messages
