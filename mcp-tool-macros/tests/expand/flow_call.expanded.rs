/// Asks to confirm `what`.
///
/// An `#[mcp_flow]`: `.await` the call inside a tool or flow (it may suspend), or in
/// direct mode.
#[allow(non_camel_case_types)]
struct confirm<'__mcp_a>(
    &'__mcp_a mut ::mcp_tool_runtime::__private::v0_1_0::ToolContext,
    String,
);
impl<'__mcp_a> confirm<'__mcp_a> {
    /// Names this call's site: the prefix of the flow's request keys (`site/key`).
    #[allow(dead_code)]
    pub fn key(
        self,
        site: impl ::core::convert::Into<::std::string::String>,
    ) -> ::mcp_tool_runtime::__private::v0_1_0::Keyed<Self> {
        ::mcp_tool_runtime::__private::v0_1_0::Keyed::new(self, site)
    }
    /// The function as written (direct mode).
    #[allow(clippy::all)]
    async fn __mcp_direct(
        cx: &mut ToolContext,
        what: String,
    ) -> Result<bool, ToolError> {
        let answer: YesNo = cx
            .ask(format!("{what}?"))
            .__mcp_default_key("answer")
            .await?;
        Ok(answer.ok)
    }
}
#[allow(warnings, clippy::all)]
const _: () = {
    use ::mcp_tool_runtime::__private::v0_1_0 as __mcp;
    use __mcp::autoref::traits::*;
    type __mcp_Ret = Result<bool, ToolError>;
    type __mcp_Err = <__mcp_Ret as __mcp::ToolReturn>::Error;
    async fn __mcp_run<'__mcp_a>(
        cx: &mut __mcp::ToolContext,
        __mcp_params: __mcp::Option<(String,)>,
        __mcp_state: __mcp::Option<&__mcp::RawValue>,
    ) -> __mcp::Result<__mcp::FlowStep<__mcp_Ret>, __mcp_Err> {
        enum __mcp_State<__mcp_T0, __mcp_T1> {
            Start(__mcp_T0),
            S0(__mcp_T1),
        }
        const __mcp_R0: __mcp::Point = __mcp::point("__mcp_m0", "answer", false, false);
        let __mcp_p = __mcp::plumb::<__mcp_Err>();
        let (__mcp_s, mut __mcp_v) = __mcp_p.open(cx, __mcp_state)?;
        let mut __mcp_st = match (__mcp_params, __mcp_s.as_str()) {
            (__mcp::Option::Some((what,)), _) => __mcp_State::Start(what),
            (_, "S0") => __mcp_State::S0(__mcp_v.marker(&__mcp_R0)),
            _ => return __mcp_p.invalid(cx),
        };
        __mcp_p.ok(__mcp_v.check(), cx)?;
        '__mcp_dispatch: loop {
            match __mcp_st {
                __mcp_State::Start(what) => {
                    let __mcp_b0 = __mcp::Ask::<YesNo>::new(format!("{what}?"));
                    let __mcp_m0 = __mcp_p.request(cx, &__mcp_R0, __mcp_b0)?;
                    if __mcp::Reentrant::round_ready(cx) {
                        __mcp_st = __mcp_State::S0(__mcp_m0);
                        continue '__mcp_dispatch;
                    }
                    return __mcp_p.suspend_keys(cx, "S0", [], [__mcp_m0.kept()]);
                }
                __mcp_State::S0(__mcp_m0) => {
                    let answer: YesNo = __mcp::answer_for(cx, __mcp_m0)?;
                    return __mcp::done(Ok(answer.ok));
                }
            }
        }
    }
    impl<'__mcp_a> ::core::future::IntoFuture for confirm<'__mcp_a> {
        type Output = __mcp_Ret;
        type IntoFuture = __mcp::BoxFuture<'__mcp_a, __mcp_Ret>;
        fn into_future(self) -> Self::IntoFuture {
            let confirm(__mcp_cx, __mcp_p0) = self;
            __mcp::Box::pin(async move {
                let __mcp_mark = __mcp::flow_enter(__mcp_cx, "confirm");
                let __mcp_r = Self::__mcp_direct(&mut *__mcp_cx, __mcp_p0).await;
                __mcp::flow_leave(__mcp_cx, __mcp_mark);
                __mcp_r
            })
        }
    }
    impl<'__mcp_a> __mcp::Flow for confirm<'__mcp_a> {
        type Output = __mcp_Ret;
        const NAME: &'static str = "confirm";
        fn context(&mut self) -> &mut __mcp::ToolContext {
            &mut *self.0
        }
        fn info() -> __mcp::FlowInfo {
            __mcp::flow_info(
                &__mcp::Meta {
                    name: "confirm",
                    capabilities: __mcp::caps(true, false, false),
                    points: 1u32,
                    layout: "loPxjN4hJaA",
                    ..__mcp::Meta::DEFAULT
                },
                ::std::vec![],
                [__mcp::check_elicitation::<YesNo>("answer")],
                &[],
            )
        }
        fn start<'s>(self) -> __mcp::BoxFuture<'s, __mcp::FlowStep<__mcp_Ret>>
        where
            Self: 's,
        {
            let confirm(__mcp_cx, __mcp_p0) = self;
            let __mcp_params = __mcp::Option::Some((__mcp_p0,));
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
        __mcp_params: __mcp::Option<(String,)>,
        __mcp_state: __mcp::Option<__mcp::Json>,
    ) -> __mcp::FlowStep<__mcp_Ret> {
        let __mcp_mark = __mcp::flow_enter(__mcp_cx, "confirm");
        let __mcp_out = __mcp_run(&mut *__mcp_cx, __mcp_params, __mcp_state.as_deref())
            .await;
        __mcp::flow_leave(__mcp_cx, __mcp_mark);
        __mcp::flow_outcome(__mcp_out)
    }
};
#[allow(dead_code)]
/// Deletes after a confirmation.
async fn delete(
    cx: &mut ToolContext,
    args: Items,
    store: State<Store>,
) -> Result<String, ToolError> {
    let sure = confirm(
            ::mcp_tool_runtime::__private::v0_1_0::site(cx, "sure"),
            format!("Delete {}", args.name),
        )
        .await?;
    if sure {
        store.delete(&args.name);
    }
    Ok(format!("{sure}"))
}
///The `delete` MCP tool generated by `#[mcp_tool]` from `fn delete`: register it with `delete::tool()`.
#[allow(non_camel_case_types)]
struct delete {}
#[allow(warnings, clippy::all)]
const _: () = {
    use ::mcp_tool_runtime::__private::v0_1_0 as __mcp;
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
        let mut __mcp_a = __mcp_p.ok(__mcp::Args::<Items>::json(__mcp_args), cx)?;
        let (__mcp_s, mut __mcp_v) = __mcp_p.open(cx, __mcp_state)?;
        let mut __mcp_st = match __mcp_s.as_str() {
            "" => __mcp_State::Start,
            "S0" => __mcp_State::S0(__mcp_v.flow("__mcp_m0", "sure")),
            _ => return __mcp_p.invalid(cx),
        };
        __mcp_p.ok(__mcp_v.check(), cx)?;
        '__mcp_dispatch: loop {
            match __mcp_st {
                __mcp_State::Start => {
                    let args: Items = __mcp_p.ok(__mcp_a.get(), cx)?;
                    let __mcp_call = confirm(cx, format!("Delete {}", args.name));
                    let __mcp_m0 = (&&__mcp::autoref::wrap(&__mcp_call))
                        .ops()
                        .call(__mcp::String::from("sure"), __mcp_call)
                        .await;
                    if __mcp_m0.suspended() {
                        return __mcp_p
                            .suspend_flow(cx, "S0", [], "__mcp_m0", __mcp_m0, "sure");
                    }
                    __mcp_st = __mcp_State::S0(__mcp_m0);
                    continue '__mcp_dispatch;
                }
                __mcp_State::S0(__mcp_m0) => {
                    let args: Items = __mcp_p.ok(__mcp_a.get(), cx)?;
                    let store: State<Store> = __mcp_p
                        .ok(<State<Store> as __mcp::FromContext>::from_context(cx), cx)?;
                    let __mcp_r0 = match __mcp_m0 {
                        __mcp::FlowSlot::Done(__mcp_r) => __mcp_r,
                        __mcp::FlowSlot::Saved(__mcp_site0, __mcp_s) => {
                            let __mcp_w = false.then(|| confirm(loop {}, loop {}));
                            let __mcp_m0 = (&&__mcp::autoref::wrap_witness(&__mcp_w))
                                .ops()
                                .again(cx, __mcp_site0, __mcp_s)
                                .await;
                            let __mcp::FlowSlot::Done(__mcp_r) = __mcp_m0 else {
                                return __mcp_p
                                    .suspend_flow(cx, "S0", [], "__mcp_m0", __mcp_m0, "sure");
                            };
                            __mcp_r
                        }
                    };
                    let sure = __mcp_r0?;
                    if sure {
                        store.delete(&args.name);
                    }
                    return __mcp::done(Ok(format!("{sure}")));
                }
            }
        }
    }
    impl delete {
        /// The tool, ready for `Server::builder(..).tool(..)`.
        fn tool() -> Self {
            delete {}
        }
        ///What the tool takes from the flows it calls.
        fn __mcp_flows() -> __mcp::Vec<__mcp::FlowInfo> {
            ::std::vec![
                (&& __mcp::autoref::wrap_witness(& false.then(|| confirm(loop {}, loop
                {})))).ops().info()
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
            let __mcp_p0: Items = __mcp::parse_args::<Items>(__mcp_args)?;
            let __mcp_p1: State<Store> = <State<
                Store,
            > as __mcp::FromContext>::from_context(cx)?;
            let __mcp_r = delete(&mut *cx, __mcp_p0, __mcp_p1).await;
            __mcp::direct_done(cx, __mcp_r, Self::__mcp_done)
        }
    }
    impl __mcp::Tool for delete {
        fn info(&self) -> __mcp::ToolInfo {
            __mcp::tool_info(
                &__mcp::Meta {
                    name: "delete",
                    description: __mcp::Option::Some("Deletes after a confirmation."),
                    layout: "bcupcKlGybU",
                    ..__mcp::Meta::DEFAULT
                },
                __mcp::input_schema::<Items>(),
                { (&&__mcp::autoref::OutputOf::<__mcp_Ok>::new()).schema() },
                &Self::__mcp_flows(),
            )
        }
        fn validate(&self) -> __mcp::Result<(), __mcp::RegistrationError> {
            __mcp::validate_with([], &Self::__mcp_flows())
        }
        fn required_state(&self) -> __mcp::Vec<__mcp::StateKey> {
            __mcp::state_keys(
                ::std::vec![< State < Store > as __mcp::FromContext > ::keys()],
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
