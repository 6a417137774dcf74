import { createRouter, createWebHistory, type RouteRecordRaw } from 'vue-router'
import { restoreSession, session } from '@/stores/session'
import { loadFromQuery, type ListQuery } from '@/composables/usePagedList'
import { dropPrefetchedList, prefetchList } from '@/composables/list-prefetch'
import { jobListQuery } from '@/pages/jobs/job-list-query'
import { runListQuery } from '@/pages/runs/run-list-query'
import { workflowListQuery } from '@/pages/workflows/workflow-list-query'
import { workflowRunListQuery } from '@/pages/workflows/workflow-run-list-query'
import { calendarListQuery } from '@/pages/calendars/calendar-list-query'
import { backfillListQuery } from '@/pages/backfills/backfill-list-query'

declare module 'vue-router' {
  interface RouteMeta {
    /** i18n key of the page's title. */
    title?: string
    /** Reachable without logging in. */
    public?: boolean
    /** Only for admins (others see a "not allowed" result). */
    admin?: boolean
    /** The menu entry to highlight. */
    menu?: string
    /** The page's paged list: its first page is loaded while the page's code downloads. */
    list?: ListQuery<any, unknown>
  }
}

// Every page is its own chunk, loaded when first visited.
export const routes: RouteRecordRaw[] = [
  {
    path: '/login',
    name: 'login',
    component: () => import('@/pages/login/LoginPage.vue'),
    meta: { public: true, title: 'login.submit' },
  },
  {
    path: '/',
    component: () => import('@/components/layout/AppShell.vue'),
    children: [
      {
        path: '',
        name: 'dashboard',
        component: () => import('@/pages/dashboard/DashboardPage.vue'),
        meta: { title: 'shell.menu.dashboard', menu: '/' },
      },
      {
        path: 'jobs',
        name: 'jobs',
        component: () => import('@/pages/jobs/JobListPage.vue'),
        meta: { title: 'shell.menu.jobs', menu: '/jobs', list: jobListQuery },
      },
      {
        path: 'jobs/new',
        name: 'job-new',
        component: () => import('@/pages/jobs/JobEditPage.vue'),
        meta: { title: 'jobs.newTitle', menu: '/jobs' },
      },
      {
        path: 'jobs/:id(\\d+)',
        name: 'job-edit',
        component: () => import('@/pages/jobs/JobEditPage.vue'),
        props: true,
        meta: { title: 'jobs.editTitle', menu: '/jobs' },
      },
      {
        path: 'jobs/:id(\\d+)/script',
        name: 'job-script',
        component: () => import('@/pages/jobs/script/ScriptEditorPage.vue'),
        props: true,
        meta: { title: 'script.title', menu: '/jobs' },
      },
      {
        path: 'runs',
        name: 'runs',
        component: () => import('@/pages/runs/RunListPage.vue'),
        meta: { title: 'shell.menu.runs', menu: '/runs', list: runListQuery },
      },
      {
        path: 'runs/:id(\\d+)',
        name: 'run',
        component: () => import('@/pages/runs/RunDetailPage.vue'),
        props: true,
        meta: { title: 'runs.detailTitle', menu: '/runs' },
      },
      {
        path: 'backfills',
        name: 'backfills',
        component: () => import('@/pages/backfills/BackfillListPage.vue'),
        meta: { title: 'backfills.title', menu: '/runs', list: backfillListQuery },
      },
      {
        path: 'backfills/:id(\\d+)',
        name: 'backfill',
        component: () => import('@/pages/backfills/BackfillPage.vue'),
        props: true,
        meta: { title: 'backfills.detailTitle', menu: '/runs' },
      },
      {
        path: 'workflows',
        name: 'workflows',
        component: () => import('@/pages/workflows/WorkflowListPage.vue'),
        meta: { title: 'shell.menu.workflows', menu: '/workflows', list: workflowListQuery },
      },
      {
        path: 'workflows/new',
        name: 'workflow-new',
        component: () => import('@/pages/workflows/WorkflowEditPage.vue'),
        meta: { title: 'workflows.newTitle', menu: '/workflows' },
      },
      {
        path: 'workflows/:id(\\d+)',
        name: 'workflow-edit',
        component: () => import('@/pages/workflows/WorkflowEditPage.vue'),
        props: true,
        meta: { title: 'workflows.editTitle', menu: '/workflows' },
      },
      {
        path: 'workflow-runs',
        name: 'workflow-runs',
        component: () => import('@/pages/workflows/WorkflowRunListPage.vue'),
        meta: { title: 'workflows.runList.title', menu: '/workflows', list: workflowRunListQuery },
      },
      {
        path: 'workflow-runs/:id(\\d+)',
        name: 'workflow-run',
        component: () => import('@/pages/workflows/WorkflowRunPage.vue'),
        props: true,
        meta: { title: 'workflows.runView.title', menu: '/workflows' },
      },
      {
        path: 'calendars',
        name: 'calendars',
        component: () => import('@/pages/calendars/CalendarListPage.vue'),
        meta: { title: 'shell.menu.calendars', menu: '/calendars', list: calendarListQuery },
      },
      {
        path: 'calendars/new',
        name: 'calendar-new',
        component: () => import('@/pages/calendars/CalendarEditPage.vue'),
        meta: { title: 'calendars.newTitle', menu: '/calendars', admin: true },
      },
      {
        path: 'calendars/:id(\\d+)',
        name: 'calendar-edit',
        component: () => import('@/pages/calendars/CalendarEditPage.vue'),
        props: true,
        meta: { title: 'calendars.pageTitle', menu: '/calendars' },
      },
      {
        path: 'cluster',
        name: 'cluster',
        component: () => import('@/pages/cluster/ClusterPage.vue'),
        meta: { title: 'shell.menu.cluster', menu: '/cluster' },
      },
      {
        path: 'groups',
        name: 'groups',
        component: () => import('@/pages/groups/GroupListPage.vue'),
        meta: { title: 'shell.menu.groups', menu: '/groups' },
      },
      {
        path: 'groups/new',
        name: 'group-new',
        component: () => import('@/pages/groups/GroupEditPage.vue'),
        meta: { title: 'groups.newTitle', menu: '/groups', admin: true },
      },
      {
        path: 'groups/:id(\\d+)',
        name: 'group-edit',
        component: () => import('@/pages/groups/GroupEditPage.vue'),
        props: true,
        meta: { title: 'groups.editTitle', menu: '/groups' },
      },
      {
        path: 'users',
        name: 'users',
        component: () => import('@/pages/users/UserListPage.vue'),
        meta: { title: 'shell.menu.users', menu: '/users', admin: true },
      },
      {
        path: 'alarm-channels',
        name: 'alarm-channels',
        component: () => import('@/pages/alarms/AlarmChannelListPage.vue'),
        meta: { title: 'shell.menu.alarms', menu: '/alarm-channels', admin: true },
      },
      {
        path: 'tokens',
        name: 'tokens',
        component: () => import('@/pages/tokens/TokenListPage.vue'),
        meta: { title: 'shell.menu.tokens', menu: '/tokens' },
      },
      {
        path: 'audit',
        name: 'audit',
        component: () => import('@/pages/audit/AuditPage.vue'),
        meta: { title: 'shell.menu.audit', menu: '/audit', admin: true },
      },
      {
        path: ':pathMatch(.*)*',
        name: 'not-found',
        component: () => import('@/pages/not-found/NotFoundPage.vue'),
        meta: { title: 'common.errors.notFoundTitle' },
      },
    ],
  },
]

export const router = createRouter({
  history: createWebHistory('/'),
  routes,
  scrollBehavior(_to, from, saved) {
    // The first page is at the top already: scrolling would only lay the page out early.
    if (from.matched.length === 0) return false
    return saved ?? { top: 0 }
  },
})

router.beforeEach(async (to) => {
  dropPrefetchedList()
  if (to.meta.public) {
    // Already logged in: the login page sends on to where the user was going.
    if (to.name === 'login') {
      const user = await restoreSession().catch(() => null)
      if (user && to.query.expired !== '1') {
        const redirect = typeof to.query.redirect === 'string' && to.query.redirect.startsWith('/') ? to.query.redirect : '/'
        return redirect
      }
    }
    return true
  }
  try {
    await restoreSession()
  } catch {
    // The admin did not answer: show the shell, whose pages report their own errors.
    return true
  }
  if (!session.user) return { name: 'login', query: { redirect: to.fullPath } }
  const list = to.meta.list
  if (list && !(to.meta.admin && session.user.role !== 'admin')) prefetchList(to.fullPath, () => loadFromQuery(list, to.query))
  return true
})
