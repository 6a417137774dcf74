import type en from '../en/users'

const messages: typeof en = {
  title: '用户管理',
  create: '新建用户',
  createTitle: '新建用户',
  editTitle: '编辑 {name}',
  columns: {
    username: '用户名',
    role: '角色',
    groups: '执行器分组',
    createdAt: '创建时间',
    updatedAt: '最后修改',
  },
  fields: {
    username: '用户名',
    usernameHelp: '字母、数字、点、下划线、连字符和 at 符号，最多 64 个字符；创建后不可修改。',
    password: '密码',
    repeat: '再次输入密码',
    role: '角色',
    groups: '执行器分组',
    groupsHelp: '用户可以查看和操作的执行器分组。管理员可见所有分组。',
    groupsPlaceholder: '选择分组',
  },
  allGroups: '全部分组',
  noGroups: '无分组',
  you: '你',
  noPassword: '未设密码',
  noPasswordHelp: '由作业文件导入：管理员设置密码（重置密码）之前无法登录。',
  ownRole: '不能修改自己的角色。',
  resetPassword: '重置密码',
  resetTitle: '重置 {name} 的密码',
  resetHelp: '其所有会话将结束，所有 API 令牌将被吊销。',
  resetDone: '{name} 的密码已修改。',
  mismatch: '两次输入的密码不一致',
  created: '用户 {name} 已创建。',
  deleteConfirm: '删除用户“{name}”？其会话将结束，API 令牌将失效。',
  editLabel: '编辑用户 {name}',
  deleteLabel: '删除用户 {name}',
  resetLabel: '重置 {name} 的密码',
}

export default messages
