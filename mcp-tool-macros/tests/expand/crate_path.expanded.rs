/// Asks for a name, through a framework that re-exports the runtime as `my_framework::mcp`.
///
/// An `#[mcp_flow]`: `.await` the call inside a tool or flow (it may suspend), or in
/// direct mode.
#[allow(non_camel_case_types)]
struct ask_name<'__mcp_a>(
    &'__mcp_a mut ::my_framework::mcp::__private::v0_1_0::ToolContext,
);
impl<'__mcp_a> ask_name<'__mcp_a> {
    /// Names this call's site: the prefix of the flow's request keys (`site/key`).
    #[allow(dead_code)]
    pub fn key(
        self,
        site: impl ::core::convert::Into<::std::string::String>,
    ) -> ::my_framework::mcp::__private::v0_1_0::Keyed<Self> {
        ::my_framework::mcp::__private::v0_1_0::Keyed::new(self, site)
    }
    /// The function as written (direct mode).
    #[allow(clippy::all)]
    async fn __mcp_direct(cx: &mut ToolContext) -> Result<String, ToolError> {
        let who: Who = cx.ask("Your name?").__mcp_default_key("who").await?;
        Ok(who.name)
    }
}
#[allow(warnings, clippy::all)]
const _: () = {
    use ::my_framework::mcp::__private::v0_1_0 as __mcp;
    use __mcp::autoref::traits::*;
    type __mcp_Ret = Result<String, ToolError>;
    type __mcp_Err = <__mcp_Ret as __mcp::ToolReturn>::Error;
    async fn __mcp_run<'__mcp_a>(
        cx: &mut __mcp::ToolContext,
        __mcp_params: __mcp::Option<()>,
        __mcp_state: __mcp::Option<&__mcp::RawValue>,
    ) -> __mcp::Result<__mcp::FlowStep<__mcp_Ret>, __mcp_Err> {
        enum __mcp_State<__mcp_T0> {
            Start,
            S0(__mcp_T0),
        }
        const __mcp_R0: __mcp::Point = __mcp::point("__mcp_m0", "who", false, true);
        let __mcp_p = __mcp::plumb::<__mcp_Err>();
        let (__mcp_s, mut __mcp_v) = __mcp_p.open(cx, __mcp_state)?;
        let mut __mcp_st = match (__mcp_params, __mcp_s.as_str()) {
            (__mcp::Option::Some(()), _) => __mcp_State::Start,
            (_, "S0") => __mcp_State::S0(__mcp_v.marker(&__mcp_R0)),
            _ => return __mcp_p.invalid(cx),
        };
        __mcp_p.ok(__mcp_v.check(), cx)?;
        '__mcp_dispatch: loop {
            match __mcp_st {
                __mcp_State::Start => {
                    let __mcp_b0 = __mcp::Ask::<Who>::new("Your name?");
                    let __mcp_m0 = __mcp_p.request(cx, &__mcp_R0, __mcp_b0)?;
                    if __mcp::Reentrant::round_ready(cx) {
                        __mcp_st = __mcp_State::S0(__mcp_m0);
                        continue '__mcp_dispatch;
                    }
                    return __mcp_p.suspend_keys(cx, "S0", [], [__mcp_m0.kept()]);
                }
                __mcp_State::S0(__mcp_m0) => {
                    if __mcp::reasking(cx) {
                        let __mcp_b0 = __mcp::Ask::<Who>::new("Your name?");
                        let __mcp_m0 = __mcp_p.request(cx, &__mcp_R0, __mcp_b0)?;
                        return __mcp::reask();
                    }
                    let who: Who = __mcp::answer_for(cx, __mcp_m0)?;
                    return __mcp::done(Ok(who.name));
                }
            }
        }
    }
    impl<'__mcp_a> ::core::future::IntoFuture for ask_name<'__mcp_a> {
        type Output = __mcp_Ret;
        type IntoFuture = __mcp::BoxFuture<'__mcp_a, __mcp_Ret>;
        fn into_future(self) -> Self::IntoFuture {
            let ask_name(__mcp_cx) = self;
            __mcp::Box::pin(async move {
                let __mcp_mark = __mcp::flow_enter(__mcp_cx, "ask_name");
                let __mcp_r = Self::__mcp_direct(&mut *__mcp_cx).await;
                __mcp::flow_leave(__mcp_cx, __mcp_mark);
                __mcp_r
            })
        }
    }
    impl<'__mcp_a> __mcp::Flow for ask_name<'__mcp_a> {
        type Output = __mcp_Ret;
        const NAME: &'static str = "ask_name";
        fn context(&mut self) -> &mut __mcp::ToolContext {
            &mut *self.0
        }
        fn info() -> __mcp::FlowInfo {
            __mcp::flow_info(
                &__mcp::Meta {
                    name: "ask_name",
                    capabilities: __mcp::caps(true, false, false),
                    points: 1u32,
                    layout: "eAeIViMWAbI",
                    ..__mcp::Meta::DEFAULT
                },
                ::std::vec![],
                [__mcp::check_elicitation::<Who>("who")],
                &[],
            )
        }
        fn start<'s>(self) -> __mcp::BoxFuture<'s, __mcp::FlowStep<__mcp_Ret>>
        where
            Self: 's,
        {
            let ask_name(__mcp_cx) = self;
            let __mcp_params = __mcp::Option::Some(());
            __mcp::Box::pin(__mcp_flow(__mcp_cx, __mcp_params, __mcp::Option::None))
        }
        fn resume(
            cx: &mut __mcp::ToolContext,
            state: __mcp::Json,
        ) -> __mcp::BoxFuture<'_, __mcp::FlowStep<__mcp_Ret>> {
            __mcp::Box::pin(
                __mcp_flow(cx, __mcp::Option::None, __mcp::Option::Some(state)),
            )
        }
    }
    /// One round of the machine inside the flow's key prefix.
    async fn __mcp_flow<'__mcp_a>(
        __mcp_cx: &mut __mcp::ToolContext,
        __mcp_params: __mcp::Option<()>,
        __mcp_state: __mcp::Option<__mcp::Json>,
    ) -> __mcp::FlowStep<__mcp_Ret> {
        let __mcp_mark = __mcp::flow_enter(__mcp_cx, "ask_name");
        let __mcp_out = __mcp_run(&mut *__mcp_cx, __mcp_params, __mcp_state.as_deref())
            .await;
        __mcp::flow_leave(__mcp_cx, __mcp_mark);
        __mcp::flow_outcome(__mcp_out)
    }
};
#[allow(dead_code)]
/// Greets, with application state, through the same re-export.
async fn greet(
    cx: &mut ToolContext,
    args: Greeting,
    names: State<Names>,
) -> Result<String, ToolError> {
    let name = ask_name(::my_framework::mcp::__private::v0_1_0::site(cx, "name")).await?;
    names.remember(&name);
    Ok(format!("{}, {name}!", args.greeting))
}
///The `greet` MCP tool generated by `#[mcp_tool]` from `fn greet`: register it with `greet::tool()`.
#[allow(non_camel_case_types)]
struct greet {}
#[allow(warnings, clippy::all)]
const _: () = {
    use ::my_framework::mcp::__private::v0_1_0 as __mcp;
    use __mcp::autoref::traits::*;
    type __mcp_Ret = Result<String, ToolError>;
    type __mcp_Ok = <__mcp_Ret as __mcp::ToolReturn>::Ok;
    type __mcp_Err = <__mcp_Ret as __mcp::ToolReturn>::Error;
    async fn __mcp_run(
        cx: &mut __mcp::ToolContext,
        __mcp_args: &__mcp::RawValue,
        __mcp_state: __mcp::Option<&__mcp::RawValue>,
    ) -> __mcp::Result<__mcp::FlowStep<__mcp_Ret>, __mcp_Err> {
        enum __mcp_State<__mcp_T0> {
            Start,
            S0(__mcp_T0),
        }
        let __mcp_p = __mcp::plumb::<__mcp_Err>();
        let mut __mcp_a = __mcp_p.ok(__mcp::Args::<Greeting>::json(__mcp_args), cx)?;
        let (__mcp_s, mut __mcp_v) = __mcp_p.open(cx, __mcp_state)?;
        let mut __mcp_st = match __mcp_s.as_str() {
            "" => __mcp_State::Start,
            "S0" => __mcp_State::S0(__mcp_v.flow("__mcp_m0", "name")),
            _ => return __mcp_p.invalid(cx),
        };
        __mcp_p.ok(__mcp_v.check(), cx)?;
        '__mcp_dispatch: loop {
            match __mcp_st {
                __mcp_State::Start => {
                    let __mcp_call = ask_name(cx);
                    let __mcp_m0 = (&&__mcp::autoref::wrap(&__mcp_call))
                        .ops()
                        .call(__mcp::String::from("name"), __mcp_call)
                        .await;
                    if __mcp_m0.suspended() {
                        return __mcp_p
                            .suspend_flow(cx, "S0", [], "__mcp_m0", __mcp_m0, "name");
                    }
                    __mcp_st = __mcp_State::S0(__mcp_m0);
                    continue '__mcp_dispatch;
                }
                __mcp_State::S0(__mcp_m0) => {
                    let args: Greeting = __mcp_p.ok(__mcp_a.get(), cx)?;
                    let names: State<Names> = __mcp_p
                        .ok(<State<Names> as __mcp::FromContext>::from_context(cx), cx)?;
                    let __mcp_r0 = match __mcp_m0 {
                        __mcp::FlowSlot::Done(__mcp_r) => __mcp_r,
                        __mcp::FlowSlot::Saved(__mcp_site0, __mcp_s) => {
                            let __mcp_w = false.then(|| ask_name(loop {}));
                            let __mcp_m0 = (&&__mcp::autoref::wrap_witness(&__mcp_w))
                                .ops()
                                .again(cx, __mcp_site0, __mcp_s)
                                .await;
                            let __mcp::FlowSlot::Done(__mcp_r) = __mcp_m0 else {
                                return __mcp_p
                                    .suspend_flow(cx, "S0", [], "__mcp_m0", __mcp_m0, "name");
                            };
                            __mcp_r
                        }
                    };
                    let name = __mcp_r0?;
                    names.remember(&name);
                    return __mcp::done(Ok(format!("{}, {name}!", args.greeting)));
                }
            }
        }
    }
    impl greet {
        /// The tool, ready for `Server::builder(..).tool(..)`.
        fn tool() -> Self {
            greet {}
        }
        ///What the tool takes from the flows it calls.
        fn __mcp_flows() -> __mcp::Vec<__mcp::FlowInfo> {
            ::std::vec![
                (&& __mcp::autoref::wrap_witness(& false.then(|| ask_name(loop {}))))
                .ops().info()
            ]
        }
        /// The completed value of the function's result.
        fn __mcp_done(
            __mcp_r: __mcp_Ret,
        ) -> __mcp::Result<__mcp::CallToolResult, __mcp::ToolError> {
            let __mcp_e = &&__mcp::autoref::ErrorOf::<__mcp_Err>::new();
            let __mcp_v = __mcp::value(__mcp_r, |__mcp_x| __mcp_e.tool_error(__mcp_x))?;
            (&&__mcp::autoref::OutputOf::<__mcp_Ok>::new()).finish(__mcp_v)
        }
        async fn __mcp_direct(
            cx: &mut __mcp::ToolContext,
            __mcp_args: &__mcp::RawValue,
        ) -> __mcp::Result<__mcp::CallToolResult, __mcp::ToolError> {
            let __mcp_p0: Greeting = __mcp::parse_args::<Greeting>(__mcp_args)?;
            let __mcp_p1: State<Names> = <State<
                Names,
            > as __mcp::FromContext>::from_context(cx)?;
            let __mcp_r = greet(&mut *cx, __mcp_p0, __mcp_p1).await;
            __mcp::direct_done(cx, __mcp_r, Self::__mcp_done)
        }
    }
    impl __mcp::Tool for greet {
        fn info(&self) -> __mcp::ToolInfo {
            __mcp::tool_info(
                &__mcp::Meta {
                    name: "greet",
                    description: __mcp::Option::Some(
                        "Greets, with application state, through the same re-export.",
                    ),
                    max_rounds: __mcp::Option::Some(2u32),
                    layout: "TvzJylgih00",
                    ..__mcp::Meta::DEFAULT
                },
                __mcp::input_schema::<Greeting>(),
                { (&&__mcp::autoref::OutputOf::<__mcp_Ok>::new()).schema() },
                &Self::__mcp_flows(),
            )
        }
        fn validate(&self) -> __mcp::Result<(), __mcp::RegistrationError> {
            __mcp::validate_with([], &Self::__mcp_flows())
        }
        fn required_state(&self) -> __mcp::Vec<__mcp::StateKey> {
            __mcp::state_keys(
                ::std::vec![< State < Names > as __mcp::FromContext > ::keys()],
                &Self::__mcp_flows(),
            )
        }
        fn step<'a>(
            &'a self,
            cx: &'a mut __mcp::ToolContext,
            args: &'a __mcp::RawValue,
            state: __mcp::Option<&'a __mcp::RawValue>,
        ) -> __mcp::StepFuture<'a> {
            __mcp::Box::pin(async move {
                let __mcp_out = __mcp_run(&mut *cx, args, state).await;
                __mcp::to_step(cx, __mcp_out, Self::__mcp_done)
            })
        }
        fn direct<'a>(
            &'a self,
            cx: &'a mut __mcp::ToolContext,
            args: &'a __mcp::RawValue,
        ) -> __mcp::Direct<'a> {
            (&__mcp::autoref::DirectWrap::new(Self::__mcp_direct(cx, args))).boxed()
        }
    }
};
